// One request of a client subcommand to the server, and what it means for the exit code.
//
// A request is a POST of a queue operation or a GET of a monitor operation under
// /camellia/delayQueue/. Its answer is classified once, here:
//   - the server answered JSON with "code":200                        -> kOk (exit 0)
//   - the server answered JSON with another code (404 not found, 400 bad
//     parameter, a request error, 500 storage error): it refused       -> kRefused (exit 1)
//   - no connection, no answer in time, or an answer that is not a JSON
//     object with a code (an HTTP 5xx page, some other server)         -> kUnreachable (exit 3)
// Usage errors (exit 2) are found before any request is made.
//
// Thread-compatible; a Session is used by one subcommand run.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/args.h"
#include "client/http_client.h"
#include "client/json.h"

namespace chronoq::cli {

enum ExitCode : int { kExitOk = 0, kExitRefused = 1, kExitUsage = 2, kExitUnreachable = 3 };

using Params = std::vector<std::pair<std::string, std::string>>;

// The outcome of one request.
struct Answer {
  ExitCode exit = kExitUnreachable;
  std::string body;   // the server's answer as sent (a JSON document when exit is 0 or 1)
  client::Json json;  // parsed body (null when it did not parse)
  std::string error;  // kExitRefused: the server's msg; kExitUnreachable: what went wrong
  // sendMsg only: an in-life message with the given msgId answered, nothing new was stored (the
  // server's X-Chronoq-Existing header; the body is the existing message).
  bool existing = false;
};

// Settings shared by every subcommand: where the server is, how long to wait, output format.
struct Session {
  std::string server;  // as given, for messages
  client::Endpoint endpoint;
  std::chrono::milliseconds timeout{10'000};
  bool json = false;

  // Reads --server (else $CHRONOQ_SERVER, else http://127.0.0.1:8080), --timeout and --json.
  // kInvalidArgument naming the option when one is malformed.
  static Result<Session> FromArgs(const ParsedArgs& args);

  // POST /camellia/delayQueue/<op> (or <op> itself when it starts with '/') with `params`
  // form-encoded. `extra_wait` lengthens the timeout (a long poll holds the answer that long).
  Answer Post(std::string_view op, const Params& params,
              std::chrono::milliseconds extra_wait = std::chrono::milliseconds(0)) const;
  // POST /camellia/delayQueue/<op> with `json` as the body (application/json).
  Answer PostJson(std::string_view op, std::string_view json) const;
  // GET /camellia/delayQueue/<op>?<params>.
  Answer Get(std::string_view op, const Params& params = {}) const;
};

// Classifies a received answer (see the top of this file). Exposed for tests.
Answer Classify(int http_status, std::string body);

}  // namespace chronoq::cli
