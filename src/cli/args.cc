#include "cli/args.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <limits>

namespace chronoq::cli {

std::vector<OptionSpec> CommonOptions() {
  return {
      {.name = "server",
       .help = "server URL (default $CHRONOQ_SERVER, else http://127.0.0.1:8080)",
       .value_name = "URL"},
      {.name = "json",
       .help = "print the server's JSON answer instead of text (one line per request)",
       .flag = true},
      {.name = "timeout",
       .help = "give up when the server does not answer within this long (default 10s)",
       .value_name = "DURATION"},
      {.name = "ca-file",
       .help = "https: PEM CA certificates the server's certificate must chain to (default: the "
               "system's)",
       .value_name = "FILE"},
      {.name = "cert-file",
       .help = "https: PEM client certificate, for a server with tls-client-ca-file",
       .value_name = "FILE"},
      {.name = "key-file", .help = "https: the client certificate's PEM key", .value_name = "FILE"},
  };
}

std::optional<std::string> ParsedArgs::Get(std::string_view name) const {
  auto it = values_.find(std::string(name));
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

bool ParsedArgs::Flag(std::string_view name) const {
  auto it = values_.find(std::string(name));
  return it != values_.end() && it->second == "true";
}

namespace {

const OptionSpec* FindOption(const std::vector<OptionSpec>& options, std::string_view name) {
  for (const OptionSpec& o : options) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

}  // namespace

Result<ParsedArgs> ParseArgs(const CommandSpec& spec, const std::vector<std::string>& args) {
  std::vector<OptionSpec> options = spec.options;
  for (OptionSpec& o : CommonOptions()) options.push_back(std::move(o));

  ParsedArgs out;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view word = args[i];
    if (word == "--help" || word == "-h") {
      out.help_ = true;
      continue;
    }
    if (word.rfind("--", 0) != 0 || word.size() == 2) {
      if (spec.operands.empty() || word == "--") {
        return InvalidArgument(
            fmt::format("unexpected argument '{}' (options are written --name=value)", word));
      }
      out.operands_.emplace_back(word);
      continue;
    }
    word.remove_prefix(2);
    size_t eq = word.find('=');
    std::string name(word.substr(0, eq));
    const OptionSpec* opt = FindOption(options, name);
    if (opt == nullptr) {
      return InvalidArgument(fmt::format("unknown option '--{}'", name));
    }
    if (out.values_.count(name) > 0) {
      return InvalidArgument(fmt::format("option '--{}' is given twice", name));
    }
    std::string value;
    if (eq != std::string_view::npos) {
      value = std::string(word.substr(eq + 1));
      if (opt->flag && value != "true" && value != "false") {
        return InvalidArgument(fmt::format(
            "option '--{}' is a flag: give it alone or as --{}=true|false", name, name));
      }
    } else if (opt->flag) {
      value = "true";
    } else if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) {
      value = args[++i];
    } else {
      return InvalidArgument(
          fmt::format("option '--{}' needs a value (--{}={})", name, name, opt->value_name));
    }
    out.values_[name] = std::move(value);
  }
  if (out.help_) return out;
  for (const OptionSpec& o : options) {
    if (o.required && out.values_.count(o.name) == 0) {
      return InvalidArgument(
          fmt::format("missing required option '--{}' (--{}={})", o.name, o.name, o.value_name));
    }
  }
  return out;
}

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return InvalidArgument(fmt::format(
        "'{}' is not a duration ({}); write e.g. 1500 (milliseconds), 250ms, 30s, 5m, 2h, 1d or "
        "1h30m",
        text, why));
  };
  if (text.empty()) return bad("it is empty");
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t total = 0;
  size_t pos = 0;
  bool bare_number = true;
  while (pos < text.size()) {
    const char* begin = text.data() + pos;
    const char* end = text.data() + text.size();
    int64_t n = 0;
    auto [ptr, ec] = std::from_chars(begin, end, n);
    if (ptr == begin || n < 0) return bad("expected a number of units");
    if (ec != std::errc()) return bad("too large");
    pos = static_cast<size_t>(ptr - text.data());
    size_t unit_end = pos;
    while (unit_end < text.size() && text[unit_end] >= 'a' && text[unit_end] <= 'z') ++unit_end;
    std::string_view unit = text.substr(pos, unit_end - pos);
    int64_t scale = 0;
    if (unit.empty()) {
      if (unit_end != text.size() || !bare_number) return bad("a number without a unit");
      scale = 1;
    } else if (unit == "ms") {
      scale = 1;
    } else if (unit == "s") {
      scale = 1000;
    } else if (unit == "m") {
      scale = 60'000;
    } else if (unit == "h") {
      scale = 3'600'000;
    } else if (unit == "d") {
      scale = 86'400'000;
    } else {
      return bad(fmt::format("unknown unit '{}'", unit));
    }
    bare_number = false;
    int64_t part = 0;
    if (__builtin_mul_overflow(n, scale, &part) || part > kMax - total) return bad("too large");
    total += part;
    pos = unit_end;
  }
  return std::chrono::milliseconds(total);
}

Result<int64_t> ParseInt(std::string_view text, int64_t min, int64_t max) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return InvalidArgument(fmt::format("'{}' is not a whole number", text));
  }
  if (v < min || v > max) {
    return InvalidArgument(fmt::format("{} is outside [{}, {}]", v, min, max));
  }
  return v;
}

Result<std::optional<std::chrono::milliseconds>> DurationOption(const ParsedArgs& args,
                                                                std::string_view name,
                                                                bool positive) {
  std::optional<std::string> text = args.Get(name);
  if (!text.has_value()) return std::optional<std::chrono::milliseconds>();
  Result<std::chrono::milliseconds> d = ParseDuration(*text);
  if (!d.has_value()) {
    return InvalidArgument(fmt::format("option '--{}': {}", name, d.error().message()));
  }
  if (positive && d->count() == 0) {
    return InvalidArgument(fmt::format("option '--{}': must be more than 0", name));
  }
  return std::optional<std::chrono::milliseconds>(*d);
}

Result<std::optional<int64_t>> IntOption(const ParsedArgs& args, std::string_view name, int64_t min,
                                         int64_t max) {
  std::optional<std::string> text = args.Get(name);
  if (!text.has_value()) return std::optional<int64_t>();
  Result<int64_t> v = ParseInt(*text, min, max);
  if (!v.has_value()) {
    return InvalidArgument(fmt::format("option '--{}': {}", name, v.error().message()));
  }
  return std::optional<int64_t>(*v);
}

std::string HelpText(const CommandSpec& spec) {
  std::string summary = spec.summary;
  if (!summary.empty()) summary[0] = static_cast<char>(std::toupper(summary[0]));
  std::string out = fmt::format("Usage: chronoq {} [options]{}{}\n\n{}.\n", spec.name,
                                spec.operands.empty() ? "" : " ", spec.operands, summary);
  if (!spec.details.empty()) out += "\n" + spec.details + "\n";
  auto section = [&](std::string_view title, const std::vector<OptionSpec>& options) {
    if (options.empty()) return;
    out += fmt::format("\n{}:\n", title);
    for (const OptionSpec& o : options) {
      std::string left =
          o.flag ? fmt::format("--{}", o.name) : fmt::format("--{}={}", o.name, o.value_name);
      out += fmt::format("  {:<26} {}{}\n", left, o.help, o.required ? " (required)" : "");
    }
  };
  section("Options", spec.options);
  section("Common options", CommonOptions());
  out +=
      "\nDurations: 1500 (milliseconds), 250ms, 30s, 5m, 2h, 1d, or sums such as 1h30m.\n"
      "Exit codes: 0 done; 1 the server answered but refused or did not find it; 2 usage error;\n"
      "3 the server could not be reached or did not answer properly.\n";
  return out;
}

}  // namespace chronoq::cli
