// `chronoq send|send-batch|pull|ack|...|monitor` (Commands() in command.h): the command-line
// client of the public HTTP API, for people (readable text) and scripts (--json, exit codes). It
// depends on `client` and `base` only, never on a server module.
//
// Exit codes: 0 done; 1 the server answered but refused or did not find (its msg on stderr), or
// refused some items of a batch (each item's result on stdout);
// 2 usage error, found before the server is contacted; 3 the server could not be reached, did
// not answer in time, or answered something that is not the API's JSON.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace chronoq::cli {

// True when `name` is one of the client subcommands.
bool IsCliCommand(std::string_view name);

// Runs subcommand `name` with the words after it; prints to stdout/stderr; returns the exit code.
// REQUIRES: IsCliCommand(name).
int RunCli(std::string_view name, const std::vector<std::string>& args);

// Where a run writes; RunCli uses stdout and stderr, tests capture strings.
struct Output {
  std::string out;
  std::string err;
};
// As RunCli, but collects the output in `output` instead of printing it.
int RunCliCaptured(std::string_view name, const std::vector<std::string>& args, Output* output);

// One line per subcommand ("  send       Send a message ..."), for `chronoq --help`.
std::string CommandsUsage();

}  // namespace chronoq::cli
