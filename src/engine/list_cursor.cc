#include "engine/list_cursor.h"

#include <fmt/format.h>

#include <charconv>
#include <vector>

namespace chronoq::engine {
namespace {

constexpr std::string_view kMagic = "cq1";

uint32_t Checksum(std::string_view topic, std::string_view body) {
  uint32_t h = 2166136261u;  // FNV-1a
  auto mix = [&h](std::string_view s) {
    for (char c : s) {
      h ^= static_cast<uint8_t>(c);
      h *= 16777619u;
    }
  };
  mix(topic);
  mix(std::string_view("\0", 1));
  mix(body);
  return h;
}

Status NotValid(std::string_view why) {
  return InvalidArgument(fmt::format("cursor is not valid: {}", why));
}

bool ParseHex(std::string_view s, uint64_t* v) {
  if (s.empty() || s.size() > 16) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v, 16);
  return ec == std::errc() && end == s.data() + s.size();
}

std::vector<std::string_view> Split(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '.') {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::string StatusWord(std::optional<core::MsgStatus> s) {
  return s ? fmt::format("status {}", static_cast<int>(*s)) : std::string("no status");
}

}  // namespace

std::string EncodeListCursor(std::string_view topic, const ListCursor& c) {
  std::string body = fmt::format("{}.{}{}", kMagic, c.walk ? 'w' : 's', static_cast<int>(c.status));
  if (c.at_start) {
    body += ".0";
  } else if (c.status == core::MsgStatus::kReady) {
    body += fmt::format(".{:x}.{:x}.{:x}", c.level, static_cast<uint64_t>(ToEpochMs(c.t)), c.seq);
  } else {
    body += fmt::format(".{:x}.{:x}", static_cast<uint64_t>(ToEpochMs(c.t)), c.seq);
  }
  return fmt::format("{}.{:08x}", body, Checksum(topic, body));
}

Result<ListCursor> DecodeListCursor(std::string_view topic, std::optional<core::MsgStatus> status,
                                    std::string_view text) {
  for (char ch : text) {
    if (ch < 0x21 || ch > 0x7e) return NotValid("it holds characters no cursor has");
  }
  std::vector<std::string_view> f = Split(text);
  if (f.size() < 4 || f[0] != kMagic) return NotValid("it was not made by this server");
  const size_t last_dot = text.rfind('.');
  uint64_t sum = 0;
  if (f.back().size() != 8 || !ParseHex(f.back(), &sum) ||
      sum != Checksum(topic, text.substr(0, last_dot))) {
    return NotValid(fmt::format("it was made for another topic than '{}', or altered", topic));
  }
  ListCursor c;
  std::string_view mode = f[1];
  if (mode.size() != 2 || (mode[0] != 'w' && mode[0] != 's') || mode[1] < '1' || mode[1] > '7') {
    return NotValid("unknown listing");
  }
  c.walk = mode[0] == 'w';
  c.status = static_cast<core::MsgStatus>(mode[1] - '0');
  const std::optional<core::MsgStatus> made_for =
      c.walk ? std::nullopt : std::optional<core::MsgStatus>(c.status);
  if (made_for != status || (c.walk && !core::InLife(c.status))) {
    return NotValid(fmt::format("it was made for a listing with {}, not {}", StatusWord(made_for),
                                StatusWord(status)));
  }
  std::vector<std::string_view> pos(f.begin() + 2, f.end() - 1);
  if (pos.size() == 1 && pos[0] == "0") return c;  // at the start
  const size_t want = c.status == core::MsgStatus::kReady ? 3 : 2;
  uint64_t v[3] = {0, 0, 0};
  if (pos.size() != want) return NotValid("malformed position");
  for (size_t i = 0; i < want; ++i) {
    if (!ParseHex(pos[i], &v[i])) return NotValid("malformed position");
  }
  c.at_start = false;
  size_t i = 0;
  if (want == 3) {
    if (v[0] > 19) return NotValid("malformed position");  // a level (engine/topic.h)
    c.level = static_cast<int32_t>(v[i++]);
  }
  c.t = FromEpochMs(static_cast<int64_t>(v[i++]));
  c.seq = v[i];
  return c;
}

}  // namespace chronoq::engine
