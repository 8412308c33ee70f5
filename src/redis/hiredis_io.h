// HiredisIo: drives one hiredis async context from an EventLoop (hiredis's event hooks mapped to
// EventLoop::Watch). Internal to src/redis: hiredis types stay in this folder.
#pragma once

#include <hiredis/async.h>

#include "redis/event_loop.h"

namespace chronoq::redis {

class HiredisIo final : public EventLoop::FdHandler {
 public:
  explicit HiredisIo(EventLoop* loop) : loop_(loop) {}
  // Installs the hooks on `c` (c->ev.data becomes this). Call right after redisAsyncConnect.
  void Attach(redisAsyncContext* c);
  // Forget the context (hiredis freed it, or is about to).
  void Detach() { ac_ = nullptr; }

  void OnReadable() override;
  void OnWritable() override;

 private:
  static HiredisIo* Of(void* p) { return static_cast<HiredisIo*>(p); }
  static void Set(void* p, bool HiredisIo::*which, bool on);
  static void AddRead(void* p) { Set(p, &HiredisIo::want_read_, true); }
  static void DelRead(void* p) { Set(p, &HiredisIo::want_read_, false); }
  static void AddWrite(void* p) { Set(p, &HiredisIo::want_write_, true); }
  static void DelWrite(void* p) { Set(p, &HiredisIo::want_write_, false); }
  static void Cleanup(void* p);

  EventLoop* const loop_;
  redisAsyncContext* ac_ = nullptr;
  int fd_ = -1;
  bool want_read_ = false;
  bool want_write_ = false;
};

}  // namespace chronoq::redis
