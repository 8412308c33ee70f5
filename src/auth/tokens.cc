#include "auth/tokens.h"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cstdlib>

#include "core/scope.h"

namespace chronoq::auth {
namespace {

bool IsTokenChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

// The line's fields, split at spaces and tabs, up to a '#'.
std::vector<std::string_view> Fields(std::string_view line) {
  if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// Why the token is not acceptable, without its text; empty when it is.
std::string TokenProblem(std::string_view token) {
  if (token.size() < kMinTokenBytes || token.size() > kMaxTokenBytes) {
    return fmt::format(
        "the token is {} characters long; a token has {} to {} (make one with "
        "'openssl rand -hex 32')",
        token.size(), kMinTokenBytes, kMaxTokenBytes);
  }
  for (size_t i = 0; i < token.size(); ++i) {
    if (!IsTokenChar(token[i])) {
      return fmt::format(
          "the token has a character other than A-Z a-z 0-9 '-' '.' '_' '~' at "
          "offset {}",
          i);
    }
  }
  return {};
}

}  // namespace

Digest Sha256(std::string_view text) {
  Digest d{};
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), d.data(), &len, EVP_sha256(), nullptr);
  return d;
}

bool IsWellFormedToken(std::string_view token) { return TokenProblem(token).empty(); }

Result<TokenTable> TokenTable::Parse(std::string_view text, std::string_view source) {
  TokenTable table;
  std::vector<size_t> line_of;  // by entry
  size_t line_no = 0;
  size_t pos = 0;
  auto error = [&](std::string why) {
    return InvalidArgument(fmt::format("{} line {}: {}", source, line_no, why));
  };
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    std::vector<std::string_view> f = Fields(line);
    if (f.empty()) {
      if (nl == text.size()) break;
      continue;
    }
    if (f.size() != 3 && f.size() != 4) {
      return error(fmt::format("expected '<token> <namespace> <role> [rate=<n>]', got {} field{}",
                               f.size(), f.size() == 1 ? "" : "s"));
    }
    double rate = 0;
    if (f.size() == 4) {
      std::string_view r = f[3];
      char* end = nullptr;
      std::string digits(r.substr(r.starts_with("rate=") ? 5 : r.size()));
      if (!digits.empty()) rate = std::strtod(digits.c_str(), &end);
      if (digits.empty() || end != digits.c_str() + digits.size() || !(rate > 0) || rate > 1e9) {
        return error(
            fmt::format("the 4th field must be rate=<requests per second, above 0>, got '{}'",
                        r.substr(0, 80)));
      }
    }
    if (std::string why = TokenProblem(f[0]); !why.empty()) return error(std::move(why));
    Caller caller;
    caller.anonymous = false;
    if (f[1] != "*") {
      if (!core::IsValidNamespace(f[1])) {
        return error(
            fmt::format("namespace '{}' is not valid: '*' or 1 to {} characters among "
                        "A-Z a-z 0-9 '_' '.' '-'",
                        f[1].substr(0, 80), core::kMaxNamespaceBytes));
      }
      caller.ns = std::string(f[1]);
    }
    std::optional<Role> role = ParseRole(f[2]);
    if (!role) {
      return error(
          fmt::format("role '{}' is not one of producer, consumer, admin", f[2].substr(0, 80)));
    }
    caller.role = *role;
    Digest d = Sha256(f[0]);
    for (size_t i = 0; i < table.entries_.size(); ++i) {
      if (table.entries_[i].digest == d) {
        return error(fmt::format("the same token as line {}", line_of[i]));
      }
    }
    table.entries_.push_back(Entry{d, std::move(caller), rate});
    line_of.push_back(line_no);
    if (nl == text.size()) break;
  }
  if (table.entries_.empty()) {
    return InvalidArgument(
        fmt::format("{}: no token (a line is '<token> <namespace> <role>')", source));
  }
  return table;
}

std::optional<Caller> TokenTable::Find(std::string_view token) const {
  const Entry* e = Lookup(token);
  if (e == nullptr) return std::nullopt;
  return e->caller;
}

const TokenTable::Entry* TokenTable::Lookup(std::string_view token) const {
  const Digest d = Sha256(token);
  const Entry* found = nullptr;
  // Every digest is compared, whatever matched: the time does not depend on where (or whether)
  // the token is.
  for (const Entry& e : entries_) {
    const bool same = CRYPTO_memcmp(e.digest.data(), d.data(), d.size()) == 0;
    found = same ? &e : found;
  }
  return found;
}

}  // namespace chronoq::auth
