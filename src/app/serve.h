// `chronoq serve`: builds the configured backend and the HTTP server, prints the listening line,
// and runs until SIGTERM/SIGINT. The composition root: the only place that sees every module.
#pragma once

#include <string>
#include <vector>

namespace chronoq::app {

// Returns the process exit code: 0 after a clean shutdown, 1 when the server cannot start,
// 2 for bad flags or configuration.
int RunServe(const std::vector<std::string>& args);

}  // namespace chronoq::app
