// Fuzz target: the request parser's fast path (src/http/request_parser.h) against Beast. The same
// bytes go through two RequestParsers, one with the fast path and one without (Beast alone),
// split into the same pieces as a connection's reads would bring them; every event, every byte
// count consumed, every field of every request read and every refusal (status, sentence, path)
// must be the same. Input: the first byte picks the piece size (0: all at once) and the limits
// (small ones, so that 431 and 413 are reached); the rest is the connection's bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "http/request_parser.h"

namespace {

using chronoq::http::RequestLimits;
using chronoq::http::RequestParser;
using Event = RequestParser::Event;

// What one parser said, one string per event (the fields that the server and handlers use).
std::vector<std::string> Transcript(std::string_view bytes, size_t piece, RequestLimits limits) {
  RequestParser parser(limits);
  std::vector<std::string> out;
  std::string unread;
  size_t sent = 0;
  for (int steps = 0; steps < 100000; ++steps) {
    RequestParser::Step step = parser.Feed(unread);
    FUZZ_CHECK(step.consumed <= unread.size());
    unread.erase(0, step.consumed);
    std::string line =
        std::to_string(static_cast<int>(step.event)) + " " + std::to_string(step.consumed) + " ";
    if (step.event == Event::kContinue) {
      out.push_back(line);
    } else if (step.event == Event::kRequest) {
      const chronoq::http::ParsedRequest& p = parser.request();
      const chronoq::http::HttpRequest& r = p.request;
      line += std::string(r.method) + "|" + std::string(r.target) + "|" +
              std::to_string(r.has_content_type) + std::string(r.content_type) + "|" +
              std::string(r.if_none_match) + "|" + std::to_string(r.has_authorization) +
              std::string(r.authorization) + "|" + r.body + "|" + std::to_string(p.version) +
              std::to_string(p.keep_alive) + std::to_string(p.head);
      out.push_back(line);
      parser.Reset();
    } else if (step.event == Event::kError) {
      const chronoq::http::RequestFailure& f = parser.failure();
      out.push_back(line + std::to_string(f.status) + " " + f.message + " path=" + f.path);
      return out;
    } else if (sent == bytes.size()) {
      out.push_back(line + "end " + std::to_string(unread.size()));
      return out;
    } else {
      size_t n = piece == 0 ? bytes.size() - sent : std::min(piece, bytes.size() - sent);
      unread.append(bytes.substr(sent, n));
      sent += n;
    }
  }
  FUZZ_CHECK(false);  // the parser must make progress
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t pick = data[0];
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  static constexpr size_t kPieces[] = {0, 0, 0, 0, 1, 2, 3, 7, 16, 40, 64, 100, 200, 0, 0, 0};
  const size_t piece = kPieces[pick & 15];
  RequestLimits fast{(pick & 16) != 0 ? size_t{256} : size_t{2048},
                     (pick & 32) != 0 ? size_t{16} : size_t{4096}, true};
  RequestLimits beast = fast;
  beast.fast_path = false;
  FUZZ_CHECK(Transcript(bytes, piece, fast) == Transcript(bytes, piece, beast));
  return 0;
}
