// ServiceWorld: the queue service of a fuzz target that serves requests (http_request, h2_session),
// fresh for every input so that a crash reproduces from its input: the embedded engine (2 shards)
// on the in-memory store, a manual clock and scheduler (the target moves time).
#pragma once

#include <memory>

#include "base/clock.h"
#include "base/scheduler.h"
#include "engine/engine.h"
#include "fuzz/fuzz_check.h"
#include "service/queue_service.h"
#include "storage/memory/mem_kv.h"
#include "storage/message_store.h"

namespace chronoq::fuzz {

struct ServiceWorld {
  base::ManualClock clock{FromEpochMs(1'700'000'000'000)};
  base::ManualScheduler scheduler{&clock};
  storage::MemKv kv;
  storage::MessageStore store{&kv, "fuzz"};
  std::unique_ptr<engine::Engine> engine;
  std::unique_ptr<service::QueueService> service;

  ServiceWorld() {
    engine::EngineOptions eo;
    eo.shards = 2;
    engine = std::make_unique<engine::Engine>(eo, &store, &clock, &scheduler);
    FUZZ_CHECK(engine->Recover().ok());
    service::ServiceOptions so;
    so.metrics_max_topics = 100;
    service = std::make_unique<service::QueueService>(engine.get(), &clock, &scheduler, so);
  }
  ~ServiceWorld() {
    service.reset();  // answers parked long polls, leaves the engine
    engine.reset();
  }
  ServiceWorld(const ServiceWorld&) = delete;
  ServiceWorld& operator=(const ServiceWorld&) = delete;
};

}  // namespace chronoq::fuzz
