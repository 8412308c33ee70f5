#include "redis/hiredis_io.h"

namespace chronoq::redis {

void HiredisIo::Attach(redisAsyncContext* c) {
  ac_ = c;
  fd_ = c->c.fd;
  want_read_ = want_write_ = false;
  c->ev.data = this;
  c->ev.addRead = &AddRead;
  c->ev.delRead = &DelRead;
  c->ev.addWrite = &AddWrite;
  c->ev.delWrite = &DelWrite;
  c->ev.cleanup = &Cleanup;
}

void HiredisIo::Set(void* p, bool HiredisIo::*which, bool on) {
  HiredisIo* io = Of(p);
  io->*which = on;
  io->loop_->Watch(io->fd_, io->want_read_, io->want_write_, io);
}

void HiredisIo::Cleanup(void* p) {
  HiredisIo* io = Of(p);
  io->want_read_ = io->want_write_ = false;
  if (io->fd_ >= 0) io->loop_->Watch(io->fd_, false, false, io);
  io->fd_ = -1;
}

void HiredisIo::OnReadable() {
  if (ac_ != nullptr) redisAsyncHandleRead(ac_);
}

void HiredisIo::OnWritable() {
  if (ac_ != nullptr) redisAsyncHandleWrite(ac_);
}

}  // namespace chronoq::redis
