// Fuzz target: the parsing of credentials (docs/security.md): the tokens file (auth/tokens.h),
// the Authorization header (auth::ParseAuthorization) and the /t/<token> path prefix
// (http/route_access.h). The first byte picks the parser. Invariants: no crash; a refused tokens
// file gives kInvalidArgument whose sentence holds no token of the file (no field of 16+
// characters it contains); an accepted one finds each of its tokens; a parsed Bearer token is
// non-empty, without spaces, and inside the header; a split prefix gives a token without '/' and
// a rest that starts with '/'.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "auth/authenticator.h"
#include "auth/tokens.h"
#include "fuzz/fuzz_check.h"
#include "http/route_access.h"

namespace {

void TokensFile(std::string_view text) {
  chronoq::Result<chronoq::auth::TokenTable> t = chronoq::auth::TokenTable::Parse(text, "f");
  // Every whitespace-separated field of 16+ characters (a token, or anything like one).
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' ||
                               text[i] == '\r' || text[i] == '#')) {
      ++i;
    }
    size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\n' &&
           text[i] != '\r' && text[i] != '#') {
      ++i;
    }
    std::string_view field = text.substr(start, i - start);
    if (field.size() < chronoq::auth::kMinTokenBytes) continue;
    if (!t.has_value()) {
      // Names (namespace, role) are echoed shortened to 80 characters; a token never is.
      if (field.size() > 80 && chronoq::auth::IsWellFormedToken(field)) {
        FUZZ_CHECK(t.error().message().find(field) == std::string::npos);
      }
    }
  }
  if (!t.has_value()) {
    FUZZ_CHECK(t.error().code() == chronoq::Errc::kInvalidArgument);
    FUZZ_CHECK(!t.error().message().empty());
    return;
  }
  FUZZ_CHECK(t->size() > 0);
}

void Header(std::string_view h) {
  chronoq::auth::Credential c = chronoq::auth::ParseAuthorization(h);
  FUZZ_CHECK(!(c.token && c.malformed));
  if (c.token) {
    FUZZ_CHECK(!c.token->empty());
    FUZZ_CHECK(c.token->find(' ') == std::string_view::npos);
    FUZZ_CHECK(c.token->data() >= h.data() &&
               c.token->data() + c.token->size() <= h.data() + h.size());
  } else {
    FUZZ_CHECK(c.malformed);
  }
}

void Prefix(std::string_view target) {
  std::string_view token;
  std::string_view rest;
  if (!chronoq::http::SplitTokenPrefix(target, &token, &rest)) {
    FUZZ_CHECK(!target.starts_with("/t/"));
    return;
  }
  FUZZ_CHECK(target.starts_with("/t/"));
  FUZZ_CHECK(token.find('/') == std::string_view::npos);
  FUZZ_CHECK(token.find('?') == std::string_view::npos);
  FUZZ_CHECK(rest.starts_with("/"));
  (void)chronoq::http::UnroutedOperation(rest.substr(0, rest.find('?')));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const uint8_t which = in.ConsumeIntegral<uint8_t>();
  const std::string text = in.ConsumeRemainingBytesAsString();
  switch (which % 3) {
    case 0:
      TokensFile(text);
      break;
    case 1:
      Header(text);
      break;
    default:
      Prefix(text);
      break;
  }
  return 0;
}
