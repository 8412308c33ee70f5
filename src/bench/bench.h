// `chronoq bench <workload>`: the benchmark client. Talks HTTP to a running server; depends on no
// server module. See docs/benchmarks.md.
#pragma once

#include <string>
#include <vector>

namespace chronoq::bench {

// Exit code: 0 when the run completed, 1 when it could not run or failed, 2 for usage errors.
int RunBench(const std::vector<std::string>& args);

}  // namespace chronoq::bench
