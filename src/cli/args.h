// Command-line parsing for the client subcommands (`chronoq send --topic=t ...`): a table of the
// options a subcommand takes, a parser that checks them all before anything is sent, and parsers
// for the value kinds the options use (durations with units, counts). Pure functions, no I/O.
//
// Syntax: `--name=value` or `--name value` for options, `--name` alone for flags (a flag also
// takes `--name=true|false`), `--help`/`-h` anywhere. Other words are operands (message ids for
// `chronoq ack --batch`), refused by subcommands that take none. Every error names the option it
// is about, so that the user can fix it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace chronoq::cli {

struct OptionSpec {
  std::string name;                  // without the leading "--"
  std::string help;                  // one line, may mention the default
  bool flag = false;                 // takes no value
  bool required = false;             // parsing fails when absent
  std::string value_name = "VALUE";  // shown in help: --name=VALUE
};

struct CommandSpec {
  std::string name;       // "send"
  std::string summary;    // one line for `chronoq --help`
  std::string details{};  // a few lines for `chronoq <name> --help` (may be empty)
  std::vector<OptionSpec> options{};
  // What the operands are, for help ("ID..."); empty: the subcommand takes none.
  std::string operands{};
};

// The options every client subcommand takes (--server, --json, --timeout), added to each spec.
std::vector<OptionSpec> CommonOptions();

// The options given on the command line, by name.
class ParsedArgs {
 public:
  bool help() const { return help_; }
  bool Has(std::string_view name) const { return values_.count(std::string(name)) > 0; }
  // The value of an option; nullopt when absent. A flag given without a value reads "true".
  std::optional<std::string> Get(std::string_view name) const;
  // The value of an option given as a flag: false when absent.
  bool Flag(std::string_view name) const;
  // The words that are not options, in order.
  const std::vector<std::string>& operands() const { return operands_; }

 private:
  friend Result<ParsedArgs> ParseArgs(const CommandSpec& spec,
                                      const std::vector<std::string>& args);
  bool help_ = false;
  std::map<std::string, std::string> values_;
  std::vector<std::string> operands_;
};

// Parses `args` (the words after the subcommand) against `spec` plus CommonOptions().
// kInvalidArgument, naming the option, for: an unknown option, an operand when the spec takes
// none, an option given twice, an option without its value, a flag with a value other than
// true/false, a required option missing (not checked when --help is given).
Result<ParsedArgs> ParseArgs(const CommandSpec& spec, const std::vector<std::string>& args);

// A duration: a sequence of <digits><unit> with units ms, s, m, h, d ("30s", "1h30m", "250ms"),
// or plain digits meaning milliseconds ("1500"). kInvalidArgument for anything else (negative,
// fractions, an unknown unit, overflow of 64-bit milliseconds).
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

// A decimal integer in [min, max]; kInvalidArgument otherwise.
Result<int64_t> ParseInt(std::string_view text, int64_t min, int64_t max);

// Reads an option that holds a duration; nullopt when absent. The error names the option.
// `positive`: 0 is refused too.
Result<std::optional<std::chrono::milliseconds>> DurationOption(const ParsedArgs& args,
                                                                std::string_view name,
                                                                bool positive = false);
// Reads an option that holds an integer in [min, max]; nullopt when absent.
Result<std::optional<int64_t>> IntOption(const ParsedArgs& args, std::string_view name, int64_t min,
                                         int64_t max);

// `chronoq <name> --help`: usage line, details and one line per option.
std::string HelpText(const CommandSpec& spec);

}  // namespace chronoq::cli
