// The data commands (docs/operations.md "Export and import", issue 21): `chronoq export` writes
// topics as JSON lines through listMsg (export=true) pages, `chronoq import` streams JSON lines
// to importMsgBatch. Both stream with constant memory whatever the number of messages: export
// holds one page (1,000 messages), import one batch. A progress line goes to stderr when it is a
// terminal. `chronoq import-camellia` (app/import_camellia.cc) feeds its lines to the same
// Importer.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cli/call.h"

namespace chronoq::cli {

// `chronoq export` and `chronoq import` (data_export.cc, data_import.cc): print to
// stdout/stderr and return the exit code (cli.h's).
int RunExport(const std::vector<std::string>& args);
int RunImport(const std::vector<std::string>& args);
// Their specs, for help and `chronoq --help`.
CommandSpec ExportSpec();
CommandSpec ImportSpec();

// The raw text of each element of the array member `key` of the JSON object `doc` (as the server
// wrote it, byte for byte). kInvalidArgument when doc is not such an object.
Result<std::vector<std::string_view>> RawArrayItems(std::string_view doc, std::string_view key);

// Sends JSON lines (messages as `chronoq export` writes them) to importMsgBatch in batches of
// at most kImportBatch lines and kImportBatchBytes bytes, and counts what the server did with
// each: imported, skipped (its msgId is in life there), refused (a reason per line, written to
// `report` as "<label>: reason" as soon as it is known; import labels lines "line N").
class Importer {
 public:
  static constexpr size_t kImportBatch = 1000;
  static constexpr size_t kImportBatchBytes = 4 << 20;

  Importer(const Session& session, std::FILE* report) : session_(session), report_(report) {}
  // One input line, named `label` in the report. A line that is not a JSON object is refused
  // here; an empty line is passed over. False once the server could not be reached or refused a
  // whole batch (error() says why): stop then.
  bool Add(std::string label, std::string text);
  // A line refused before it was sent (import-camellia: a message whose string is missing).
  void Refuse(std::string_view label, std::string_view why);
  // Sends what is left. False as Add.
  bool Finish();

  int64_t imported() const { return imported_; }
  int64_t skipped() const { return skipped_; }
  int64_t refused() const { return refused_; }
  int64_t lines() const { return lines_; }
  const std::string& error() const { return error_; }
  ExitCode error_exit() const { return error_exit_; }

 private:
  bool Flush();
  const Session& session_;
  std::FILE* const report_;
  std::string body_;                      // {"msgs":[ ... so far
  std::vector<std::string> batch_lines_;  // their labels
  int64_t imported_ = 0, skipped_ = 0, refused_ = 0, lines_ = 0;
  std::string error_;
  ExitCode error_exit_ = kExitOk;
};

// A progress line on stderr ("export: 12,345 of 1,000,000 messages (1%)"), redrawn at most 10
// times a second, only when stderr is a terminal.
class Progress {
 public:
  Progress(std::string what, int64_t total);
  void Add(int64_t n);
  void Done();

 private:
  std::string what_;
  int64_t total_;
  int64_t done_ = 0;
  bool tty_;
  int64_t last_ms_ = 0;
};

}  // namespace chronoq::cli
