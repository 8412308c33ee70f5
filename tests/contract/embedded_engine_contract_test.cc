// The backend contract suite on the embedded Engine over RocksKv, each case in a fresh temporary
// data directory: without and with sync_writes (group commit with fsync), each with the default
// memory horizon and with a one-second one (most of the suite's delays then go through the far
// tier: counted from the histogram, loaded from disk in chunks of two).
#include "tests/contract/engine_harness.h"

namespace chronoq::contract {
namespace {

using Kv = EngineVariant::Kv;

EngineFactory rocks({"EmbeddedEngine", Kv::kRocks, Millis(60'000), 4096});
EngineFactory rocks_small({"EmbeddedEngineSmallHorizon", Kv::kRocks, Millis(1'000), 2});
EngineFactory rocks_sync({"EmbeddedEngineSyncWrites", Kv::kRocksSync, Millis(60'000), 4096});
EngineFactory rocks_sync_small({"EmbeddedEngineSyncWritesSmallHorizon", Kv::kRocksSync,
                                Millis(1'000), 2});

INSTANTIATE_TEST_SUITE_P(EmbeddedEngine, BackendContractTest,
                         ::testing::Values(static_cast<BackendFactory*>(&rocks),
                                           static_cast<BackendFactory*>(&rocks_small),
                                           static_cast<BackendFactory*>(&rocks_sync),
                                           static_cast<BackendFactory*>(&rocks_sync_small)),
                         FactoryName);

}  // namespace
}  // namespace chronoq::contract
