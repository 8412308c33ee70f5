#include "http/request_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/check.h"
#include "http/target.h"

namespace chronoq::http {
namespace {

namespace beast = boost::beast;
namespace bhttp = beast::http;
using beast::error_code;

// A body buffer larger than this is released between requests rather than kept for the next.
constexpr size_t kKeptBodyCapacity = 64 * 1024;

// What the checks and the handlers need of one request's header, copied out of the bytes as
// Beast reads them (its own message type would allocate for every header field).
struct Header {
  std::string method;
  std::string target;  // as received (absolute-form too)
  std::string content_type;
  std::string if_none_match;
  std::string authorization;  // the first Authorization header (docs/security.md)
  bool has_authorization = false;
  bhttp::verb verb = bhttp::verb::unknown;
  unsigned version = 11;
  bool request_line_read = false;
  bool has_content_type = false;
  bool has_transfer_encoding = false;
  bool expect_seen = false;
  bool expect_continue = false;  // the first Expect header is `100-continue`
  int hosts = 0;

  void Clear() {
    method.clear();
    target.clear();
    content_type.clear();
    if_none_match.clear();
    authorization.clear();
    has_authorization = false;
    verb = bhttp::verb::unknown;
    version = 11;
    request_line_read = has_content_type = has_transfer_encoding = false;
    expect_seen = expect_continue = false;
    hosts = 0;
  }
};

// Beast's HTTP/1 parser (framing, syntax, limits) feeding a Header and a body string, both owned
// by RequestParser::Impl (which outlives it).
class BeastParser final : public bhttp::basic_parser<true> {
 public:
  BeastParser(Header* header, std::string* body) : header_(header), body_(body) {}

 private:
  void on_request_impl(bhttp::verb method, beast::string_view method_str, beast::string_view target,
                       int version, error_code&) override {
    header_->method.assign(method_str.data(), method_str.size());
    header_->target.assign(target.data(), target.size());
    header_->verb = method;
    header_->version = static_cast<unsigned>(version);
    header_->request_line_read = true;
  }
  void on_response_impl(int, beast::string_view, int, error_code&) override {}
  void on_field_impl(bhttp::field name, beast::string_view, beast::string_view value,
                     error_code&) override {
    switch (name) {
      case bhttp::field::host:
        ++header_->hosts;
        break;
      case bhttp::field::content_type:
        if (!header_->has_content_type) {  // the first one counts
          header_->has_content_type = true;
          header_->content_type.assign(value.data(), value.size());
        }
        break;
      case bhttp::field::if_none_match:
        if (header_->if_none_match.empty()) {
          header_->if_none_match.assign(value.data(), value.size());
        }
        break;
      case bhttp::field::authorization:
        if (!header_->has_authorization) {
          header_->has_authorization = true;
          header_->authorization.assign(value.data(), value.size());
        }
        break;
      case bhttp::field::transfer_encoding:
        header_->has_transfer_encoding = true;
        break;
      case bhttp::field::expect:
        if (!header_->expect_seen) {
          header_->expect_seen = true;
          header_->expect_continue =
              EqualsIgnoringCase(std::string_view(value.data(), value.size()), "100-continue");
        }
        break;
      default:
        break;
    }
  }
  void on_header_impl(error_code&) override {}
  void on_body_init_impl(const boost::optional<std::uint64_t>& length, error_code&) override {
    // The length was checked against max_body_bytes before the body is read.
    if (length) body_->reserve(static_cast<size_t>(*length));
  }
  size_t on_body_impl(beast::string_view data, error_code&) override {
    body_->append(data.data(), data.size());
    return data.size();
  }
  void on_chunk_header_impl(std::uint64_t, beast::string_view, error_code&) override {}
  size_t on_chunk_body_impl(std::uint64_t, beast::string_view data, error_code&) override {
    body_->append(data.data(), data.size());
    return data.size();
  }
  void on_finish_impl(error_code&) override {}

  Header* header_;
  std::string* body_;
};

// The length of the run of bytes at the front of `s` that are printable ASCII from `low` (`!`:
// none is a space; ` `: spaces too) to `~`. Sixteen bytes at a time where SSE2 is (x86-64
// always), else eight (the fast path's scans).
size_t PlainRun(std::string_view s, char low) {
  size_t i = 0;
#if defined(__SSE2__)
  // As signed bytes, those with the high bit set are negative: below `low` like the controls.
  const __m128i above = _mm_set1_epi8(static_cast<char>(low - 1));
  const __m128i del = _mm_set1_epi8(0x7f);
  for (; i + 16 <= s.size(); i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    const __m128i plain = _mm_and_si128(_mm_cmpgt_epi8(x, above), _mm_cmplt_epi8(x, del));
    const unsigned stop = ~static_cast<unsigned>(_mm_movemask_epi8(plain)) & 0xffffu;
    if (stop != 0) return i + static_cast<size_t>(__builtin_ctz(stop));
  }
#endif
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHighs = 0x8080808080808080ULL;
  const uint64_t lows = kOnes * static_cast<uint8_t>(low);
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t x;
    std::memcpy(&x, s.data() + i, 8);
    const uint64_t del = x ^ (kOnes * 0x7f);  // a zero byte where x has DEL
    // A byte with its high bit set, below `low`, or DEL stops the run (bytes below `low` and
    // zero bytes are found exactly when no byte has its high bit set, the case that matters).
    if (((x & kHighs) | ((x - lows) & ~x & kHighs) | ((del - kOnes) & ~del & kHighs)) != 0) break;
  }
  while (i < s.size() && s[i] >= low && s[i] < 0x7f) ++i;
  return i;
}

// The bytes of a header field name the fast path reads: letters, digits and `-`.
constexpr std::array<bool, 256> kNameChars = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) {
    t[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
  }
  return t;
}();

// The length of the run of field name bytes (kNameChars) at the front of `s`. Sixteen bytes at a
// time where SSE2 is.
size_t NameRun(std::string_view s) {
  size_t i = 0;
#if defined(__SSE2__)
  auto in = [](__m128i x, char lo, char hi) {  // lo <= x <= hi, as signed bytes
    return _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8(static_cast<char>(lo - 1))),
                         _mm_cmplt_epi8(x, _mm_set1_epi8(static_cast<char>(hi + 1))));
  };
  for (; i + 16 <= s.size(); i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    // `x | 0x20` is a lower-case letter exactly when x is a letter (bytes from 0x80 are negative).
    const __m128i letter = in(_mm_or_si128(x, _mm_set1_epi8(0x20)), 'a', 'z');
    const __m128i name =
        _mm_or_si128(_mm_or_si128(letter, in(x, '0', '9')), _mm_cmpeq_epi8(x, _mm_set1_epi8('-')));
    const unsigned stop = ~static_cast<unsigned>(_mm_movemask_epi8(name)) & 0xffffu;
    if (stop != 0) return i + static_cast<size_t>(__builtin_ctz(stop));
  }
#endif
  while (i < s.size() && kNameChars[static_cast<uint8_t>(s[i])]) ++i;
  return i;
}

// Whether the field name `name` (bytes of kNameChars) is `known` (lower case: letters and `-`)
// whatever its case: `c | 0x20` is c in lower case for a letter and leaves `-` and digits as they
// are, so eight bytes are compared at once.
bool IsField(std::string_view name, std::string_view known) {
  const size_t n = known.size();
  if (name.size() != n) return false;
  constexpr uint64_t kLower = 0x2020202020202020ULL;
  auto word = [](const char* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  };
  if (n >= 8) {
    // The words from the front, then the last eight bytes (overlapping the one before).
    for (size_t k = 0; k + 8 <= n; k += 8) {
      if ((word(name.data() + k) | kLower) != word(known.data() + k)) return false;
    }
    return (word(name.data() + n - 8) | kLower) == word(known.data() + n - 8);
  }
  for (size_t k = 0; k < n; ++k) {
    if ((name[k] | 0x20) != known[k]) return false;
  }
  return true;
}

}  // namespace

struct RequestParser::Impl {
  enum class Phase { kHeader, kBody, kDone };

  explicit Impl(RequestLimits l) : limits(l) {}

  // Whether to attempt the header with the `n` bytes held now (see the header comment).
  bool ShouldAttempt(std::string_view in);
  Step Head(std::string_view in);
  std::optional<Step> Fast(std::string_view in);
  // The request is complete: fills `parsed` from `header` (the body is in place); `fast`: read
  // by the fast path.
  Step Done(bool keep_alive, size_t consumed, bool fast);
  Step Body(std::string_view in);
  // The rest of a body whose header the fast path read.
  Step FastBody(std::string_view in);
  Step Fail(int status, std::string message, size_t consumed);
  std::string BodyLimitMessage() const {
    return fmt::format("request body is larger than {} bytes (max-body-bytes)",
                       limits.max_body_bytes);
  }
  // The origin-form target; valid until the next attempt.
  std::string_view Target() { return OriginForm(header.target, &target_storage); }

  const RequestLimits limits;
  Phase phase = Phase::kHeader;
  size_t tried = 0;    // bytes held at the last attempt at this request's header (0: none yet)
  size_t scanned = 0;  // bytes searched for the end of the header
  bool fast_refused = false;  // the fast path gave this request to Beast
  size_t fast_body_left = 0;  // body bytes still to come of a request the fast path reads
  bool fast_keep_alive = true;
  Header header;
  std::string target_storage;  // OriginForm's, when it makes the target up
  std::optional<BeastParser> beast;
  ParsedRequest parsed;  // its body is the one Beast fills
  RequestFailure failure;
};

bool RequestParser::Impl::ShouldAttempt(std::string_view in) {
  const size_t n = in.size();
  CQ_DCHECK(n >= tried, "bytes given to an earlier call are missing");
  if (n == 0 || n == tried) return false;
  const size_t limit = limits.max_header_bytes;
  bool attempt = tried == 0 || n >= 2 * tried || (tried < limit && n >= limit);
  if (!attempt) {
    size_t from = scanned >= 3 ? scanned - 3 : 0;
    attempt = in.substr(from).find("\r\n\r\n") != std::string_view::npos;
  }
  scanned = n;
  return attempt;
}

RequestParser::Step RequestParser::Impl::Head(std::string_view in) {
  if (!ShouldAttempt(in)) return {Event::kNeedMore, 0};
  tried = in.size();
  if (limits.fast_path && !fast_refused) {
    if (std::optional<Step> step = Fast(in)) return *step;
    fast_refused = true;  // Beast reads the request, from its first byte
  }
  // A fresh parser reads every byte held so far, as if they had come at once.
  header.Clear();
  parsed.request.body.clear();
  beast.emplace(&header, &parsed.request.body);
  beast->header_limit(static_cast<std::uint32_t>(
      std::min<size_t>(limits.max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
  // The body limit is checked once the header is complete, so that the 413 answer can name the
  // path; Beast would report it while still reading the header.
  beast->body_limit(boost::none);
  error_code ec;
  size_t used = beast->put(boost::asio::buffer(in.data(), in.size()), ec);
  if (ec == bhttp::error::need_more) return {Event::kNeedMore, 0};
  if (ec == bhttp::error::header_limit) {
    return Fail(431,
                fmt::format("request headers are larger than {} bytes (max-header-bytes)",
                            limits.max_header_bytes),
                used);
  }
  if (ec) return Fail(400, fmt::format("malformed HTTP request: {}", ec.message()), used);
  // What RFC 9112 makes a server reject and Beast lets through: a Transfer-Encoding whose final
  // coding is not chunked (section 6.3: the body's length is unknown, and answering would read
  // the body as the next request), and an HTTP/1.1 request without exactly one Host (3.2).
  if (header.has_transfer_encoding && !beast->chunked()) {
    return Fail(400, "malformed HTTP request: the last Transfer-Encoding must be chunked", used);
  }
  if (header.version >= 11 && header.hosts != 1) {
    return Fail(400, "malformed HTTP request: an HTTP/1.1 request needs exactly one Host header",
                used);
  }
  if (beast->content_length() && *beast->content_length() > limits.max_body_bytes) {
    return Fail(413, BodyLimitMessage(), used);
  }
  beast->body_limit(limits.max_body_bytes);
  beast->eager(true);
  phase = Phase::kBody;
  if (!beast->is_done() && header.version >= 11 && header.expect_continue) {
    return {Event::kContinue, used};
  }
  Step step = Body(in.substr(used));
  step.consumed += used;
  return step;
}

RequestParser::Step RequestParser::Impl::Body(std::string_view in) {
  if (fast_body_left != 0) return FastBody(in);
  size_t used = 0;
  if (!beast->is_done()) {
    if (in.empty()) return {Event::kNeedMore, 0};
    error_code ec;
    used = beast->put(boost::asio::buffer(in.data(), in.size()), ec);
    if (ec == bhttp::error::body_limit) return Fail(413, BodyLimitMessage(), used);
    if (ec && ec != bhttp::error::need_more) {
      return Fail(400, fmt::format("malformed HTTP request: {}", ec.message()), used);
    }
    if (!beast->is_done()) return {Event::kNeedMore, used};
  }
  return Done(beast->keep_alive(), used, false);
}

RequestParser::Step RequestParser::Impl::FastBody(std::string_view in) {
  const size_t used = std::min(in.size(), fast_body_left);
  parsed.request.body.append(in.data(), used);
  fast_body_left -= used;
  if (fast_body_left != 0) return {Event::kNeedMore, used};
  return Done(fast_keep_alive, used, true);
}

RequestParser::Step RequestParser::Impl::Done(bool keep_alive, size_t consumed, bool fast) {
  phase = Phase::kDone;
  HttpRequest& req = parsed.request;
  req.method = header.method;
  req.target = Target();
  req.has_content_type = header.has_content_type;
  req.content_type = header.content_type;
  req.if_none_match = header.if_none_match;
  req.authorization = header.authorization;
  req.has_authorization = header.has_authorization;
  parsed.version = header.version;
  parsed.keep_alive = keep_alive;
  parsed.head = header.verb == bhttp::verb::head;
  parsed.fast_path = fast;
  return {Event::kRequest, consumed};
}

// The fast path. Reads, from the first byte, `GET` or `POST`, SP, a target of visible ASCII
// starting with `/`, ` HTTP/1.1` CRLF, then fields `name:` OWS value OWS CRLF (names of
// letters, digits and `-`; values of visible ASCII, SP and HTAB, not empty) up to the empty
// line, within half the header limit, and the body. Beast reads each of these the same way;
// anything else (another method or version, absolute-form, obs-fold, obs-text, control bytes,
// bare LF, Transfer-Encoding, Expect, Upgrade, Proxy-Connection, a Connection other than
// `keep-alive` or `close`, a Content-Length other than plain digits or given twice, a Host
// missing or repeated, a body over the limit) returns nullopt for Beast to read it all: what it
// refuses, it refuses with its own answer.
// Bytes that end before the empty line, all of them read so far, are a kNeedMore (no byte used)
// until the next attempt, as Beast says while it has no CRLF CRLF (that is why such bytes hold
// none); past half the header limit they go to Beast. A body not all there yet is taken as it
// comes (FastBody), as Beast takes it.
std::optional<RequestParser::Step> RequestParser::Impl::Fast(std::string_view in) {
  const size_t limit = limits.max_header_bytes / 2;
  const size_t n = in.size();
  // The bytes end before the header does: wait for more, unless they are already too many.
  auto more = [&]() -> std::optional<Step> {
    if (n > limit) return std::nullopt;
    return Step{Event::kNeedMore, 0};
  };
  // Whether the bytes from `from` to the end are the front of `text`, short of it.
  auto front_of = [&](size_t from, std::string_view text) {
    return n - from < text.size() && text.starts_with(in.substr(from));
  };
  size_t i = 0;
  header.Clear();
  if (in.starts_with("POST ")) {
    header.method.assign("POST");
    header.verb = bhttp::verb::post;
    i = 5;
  } else if (in.starts_with("GET ")) {
    header.method.assign("GET");
    header.verb = bhttp::verb::get;
    i = 4;
  } else {
    return front_of(0, "POST ") || front_of(0, "GET ") ? more() : std::nullopt;
  }
  const size_t target_begin = i;
  if (i >= n) return more();
  if (in[i] != '/') return std::nullopt;
  i += PlainRun(in.substr(i), '!');
  const std::string_view target = in.substr(target_begin, i - target_begin);
  constexpr std::string_view kVersion = " HTTP/1.1\r\n";
  if (in.substr(i, kVersion.size()) != kVersion) {
    return front_of(i, kVersion) ? more() : std::nullopt;
  }
  i += kVersion.size();
  auto space = [](char c) { return c == ' ' || c == '\t'; };
  bool keep_alive = true;
  bool has_length = false;
  uint64_t length = 0;
  for (;;) {
    if (i > limit) return std::nullopt;
    if (i >= n) return more();
    if (in[i] == '\r') {
      if (i + 1 >= n) return more();
      if (in[i + 1] != '\n') return std::nullopt;
      i += 2;
      break;
    }
    const size_t name_begin = i;
    i += NameRun(in.substr(i));
    if (i >= n) return more();
    if (i == name_begin || in[i] != ':') return std::nullopt;
    const std::string_view name = in.substr(name_begin, i - name_begin);
    ++i;
    while (i < n && space(in[i])) ++i;
    const size_t value_begin = i;
    for (i += PlainRun(in.substr(i), ' '); i < n && in[i] == '\t';) {
      i += 1 + PlainRun(in.substr(i + 1), ' ');
    }
    if (i >= n || (in[i] == '\r' && i + 1 == n)) return more();
    if (in[i] != '\r' || in[i + 1] != '\n') return std::nullopt;
    size_t value_end = i;
    while (value_end > value_begin && space(in[value_end - 1])) --value_end;
    const std::string_view value = in.substr(value_begin, value_end - value_begin);
    i += 2;
    if (value.empty()) return std::nullopt;
    auto is = [&name](std::string_view known) { return IsField(name, known); };
    if (is("host")) {
      ++header.hosts;
    } else if (is("content-type")) {
      if (!header.has_content_type) {
        header.has_content_type = true;
        header.content_type.assign(value);
      }
    } else if (is("content-length")) {
      if (has_length || value.size() > 15 || (value.size() > 1 && value[0] == '0')) {
        return std::nullopt;
      }
      for (char c : value) {
        if (c < '0' || c > '9') return std::nullopt;
        length = 10 * length + static_cast<uint64_t>(c - '0');
      }
      has_length = true;
    } else if (is("connection")) {
      if (EqualsIgnoringCase(value, "close")) {
        keep_alive = false;
      } else if (!EqualsIgnoringCase(value, "keep-alive")) {
        return std::nullopt;
      }
    } else if (is("authorization")) {
      if (!header.has_authorization) {
        header.has_authorization = true;
        header.authorization.assign(value);
      }
    } else if (is("if-none-match")) {
      if (header.if_none_match.empty()) header.if_none_match.assign(value);
    } else if (is("transfer-encoding") || is("expect") || is("upgrade") || is("proxy-connection")) {
      return std::nullopt;
    }
  }
  if (i > limit || header.hosts != 1 || length > limits.max_body_bytes) return std::nullopt;
  header.target.assign(target);
  header.version = 11;
  header.request_line_read = true;
  const size_t here = std::min<size_t>(n - i, static_cast<size_t>(length));
  parsed.request.body.assign(in.substr(i, here));
  if (here < length) {  // the rest of the body comes in later calls
    parsed.request.body.reserve(static_cast<size_t>(length));
    phase = Phase::kBody;
    fast_body_left = static_cast<size_t>(length) - here;
    fast_keep_alive = keep_alive;
    return Step{Event::kNeedMore, n};
  }
  return Done(keep_alive, i + here, true);
}

RequestParser::Step RequestParser::Impl::Fail(int status, std::string message, size_t consumed) {
  phase = Phase::kDone;
  failure.status = status;
  failure.message = std::move(message);
  failure.path.clear();
  if (header.request_line_read) {
    std::string_view target = Target();
    failure.path.assign(target.substr(0, target.find('?')));
  }
  return {Event::kError, consumed};
}

RequestParser::RequestParser(RequestLimits limits) : impl_(std::make_unique<Impl>(limits)) {}
RequestParser::~RequestParser() = default;

RequestParser::Step RequestParser::Feed(std::string_view bytes) {
  switch (impl_->phase) {
    case Impl::Phase::kHeader:
      return impl_->Head(bytes);
    case Impl::Phase::kBody:
      return impl_->Body(bytes);
    case Impl::Phase::kDone:
      break;
  }
  CQ_CHECK(false, "RequestParser::Feed after a request or an error, without Reset()");
  return {};
}

bool RequestParser::header_done() const { return impl_->phase != Impl::Phase::kHeader; }

ParsedRequest& RequestParser::request() { return impl_->parsed; }

const RequestFailure& RequestParser::failure() const { return impl_->failure; }

void RequestParser::Reset() {
  Impl& m = *impl_;
  m.phase = Impl::Phase::kHeader;
  m.tried = m.scanned = 0;
  m.fast_refused = false;
  m.fast_body_left = 0;
  HttpRequest& req = m.parsed.request;  // no views into the last request's header
  req.method = req.target = req.content_type = req.if_none_match = req.authorization = {};
  req.has_content_type = req.has_authorization = false;
  req.caller = {};
  // The body buffer stays for the next request, unless it grew large.
  req.body.clear();
  if (req.body.capacity() > kKeptBodyCapacity) std::string().swap(req.body);
}

}  // namespace chronoq::http
