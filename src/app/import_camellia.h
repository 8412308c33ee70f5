// `chronoq import-camellia` (docs/operations.md "Switching from camellia-delay-queue", issue 21):
// reads the in-life messages of a running camellia-delay-queue deployment from its Redis (the key
// layout of API-EXTENSIONS.md section 8) and imports them into a chronoq server through
// importMsgBatch (cli::Importer), keeping msgId, payload, trigger and expire times, retry counts
// and status (waiting, ready, consuming with its ack deadline). In app/ because it is the one
// client command that needs both the Redis connection (redis/) and the API client (cli/).
#pragma once

#include <string>
#include <vector>

namespace chronoq::app {

// Prints to stdout/stderr; returns the exit code of cli/cli.h (0 done, 1 some message refused
// or skipped as unreadable, 2 usage, 3 Redis or the server unreachable).
int RunImportCamellia(const std::vector<std::string>& args);

}  // namespace chronoq::app
