#include "cli/input.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "base/json_string.h"

namespace chronoq::cli {

namespace {

Result<std::string> ReadAll(std::FILE* f, std::string_view name, std::string_view what) {
  std::string out;
  char buf[64 * 1024];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  if (std::ferror(f)) {
    return InvalidArgument(fmt::format("{}: cannot read {}: {}", what, name, std::strerror(errno)));
  }
  return out;
}

}  // namespace

Result<std::string> ReadInput(std::string_view path, std::string_view what) {
  if (path == "-") {
    if (::isatty(STDIN_FILENO)) {
      return InvalidArgument(
          fmt::format("{}: stdin is a terminal; pipe the input in or name a file", what));
    }
    return ReadAll(stdin, "stdin", what);
  }
  std::string name(path);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(name.c_str(), "rb"), &std::fclose);
  if (f == nullptr) {
    return InvalidArgument(
        fmt::format("{}: cannot open '{}': {}", what, name, std::strerror(errno)));
  }
  return ReadAll(f.get(), fmt::format("'{}'", name), what);
}

std::vector<InputLine> NonBlankLines(std::string_view text) {
  std::vector<InputLine> lines;
  int64_t number = 0;
  while (!text.empty()) {
    ++number;
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") != std::string_view::npos) lines.push_back({number, line});
  }
  return lines;
}

std::string JsonString(std::string_view s) {
  std::string out;
  base::AppendJsonString(out, s);
  return out;
}

}  // namespace chronoq::cli
