// The backend contract suite on the embedded Engine over the in-memory KvStore (MemKv), with the
// default memory horizon and with a one-second one (most of the suite's delays then go through
// the far tier and load in chunks of two).
#include "tests/contract/engine_harness.h"

namespace chronoq::contract {
namespace {

using Kv = EngineVariant::Kv;

EngineFactory memory({"MemoryEngine", Kv::kMemory, Millis(60'000), 4096});
EngineFactory memory_small({"MemoryEngineSmallHorizon", Kv::kMemory, Millis(1'000), 2});

INSTANTIATE_TEST_SUITE_P(MemoryEngine, BackendContractTest,
                         ::testing::Values(static_cast<BackendFactory*>(&memory),
                                           static_cast<BackendFactory*>(&memory_small)),
                         FactoryName);

}  // namespace
}  // namespace chronoq::contract
