// TokenTable: the tokens of `auth-tokens-file` (docs/security.md "Tokens"): one per line,
// `<token> <namespace> <role>` separated by spaces or tabs, `#` starts a comment, blank lines
// ignored; an optional 4th field `rate=<requests per second>` limits the token (a token bucket of
// that rate, holding at most one second of it, at least 1). A token is 16 to 256 characters among
// A-Z a-z 0-9 '-' '.' '_' '~' (safe in the
// `/t/<token>` path prefix; `openssl rand -hex 32` makes one); the namespace is `*` (the unnamed
// namespace) or 1-64 characters among A-Z a-z 0-9 '_' '.' '-'; the role is producer, consumer
// or admin.
//
// Only SHA-256 digests of the tokens are kept; Find digests the presented token and compares it
// with every digest in constant time (no early exit), so the time of a lookup tells nothing of
// how close a guess was. No error sentence ever holds a token's text.
//
// Plain value type: immutable after Parse, so thread-safe to read.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/access.h"
#include "base/result.h"

namespace chronoq::auth {

inline constexpr size_t kMinTokenBytes = 16;
inline constexpr size_t kMaxTokenBytes = 256;

using Digest = std::array<uint8_t, 32>;
// SHA-256 of `text`.
Digest Sha256(std::string_view text);

class TokenTable {
 public:
  // The tokens of a file's text, or kInvalidArgument "line N: <why>" for the first bad line (a
  // file without any token is refused too: "no token"). `source` starts the sentence (the path).
  static Result<TokenTable> Parse(std::string_view text, std::string_view source);

  struct Entry {
    Digest digest;
    Caller caller;
    double rate = 0;  // requests per second; 0: unlimited
  };
  // The entry of a token, or null. The pointer lives as long as the table.
  const Entry* Lookup(std::string_view token) const;
  // The caller a token stands for (never anonymous), or nullopt.
  std::optional<Caller> Find(std::string_view token) const;
  size_t size() const { return entries_.size(); }

 private:
  std::vector<Entry> entries_;
};

// True when `token` has the length and characters a token must have.
bool IsWellFormedToken(std::string_view token);

}  // namespace chronoq::auth
