// `chronoq backup`: POST /chronoq/admin/backup (docs/operations.md "Backup and restore").
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/format.h"

namespace chronoq::cli {

namespace {

// A checkpoint of a large store on a slow disk takes a while: the answer may wait this long
// beyond --timeout.
constexpr std::chrono::hours kBackupWait(1);

Result<std::vector<Request>> Build(const ParsedArgs& args) {
  return One(Request{.op = "/chronoq/admin/backup",
                     .params = {{"to", Required(args, "to")}},
                     .extra_wait = kBackupWait});
}

std::string Bytes(int64_t n) {
  if (n < 1024) return fmt::format("{} B", n);
  if (n < (int64_t{1} << 20)) return fmt::format("{:.1f} KiB", static_cast<double>(n) / 1024);
  if (n < (int64_t{1} << 30)) {
    return fmt::format("{:.1f} MiB", static_cast<double>(n) / (1 << 20));
  }
  return fmt::format("{:.2f} GiB", static_cast<double>(n) / (1 << 30));
}

std::string Render(const client::Json& answer, const Request&, const ParsedArgs&) {
  return fmt::format("backup written to {}: {} in {} files, {} ms\n",
                     Printable(answer["dir"].AsString()), Bytes(answer["bytes"].AsInt()),
                     answer["files"].AsInt(), answer["millis"].AsInt());
}

}  // namespace

Command BackupCommand() {
  return {
      .spec = {.name = "backup",
               .summary = "copy the server's embedded store while it serves (online backup)",
               .details = "Calls POST /chronoq/admin/backup. DIR is a path on the server's "
                          "machine: absolute, not existing yet,\nin a writable directory (the "
                          "same file system as the data directory makes it hard links).\nStart "
                          "a server with --data-dir=DIR to restore (docs/operations.md).",
               .options = {{.name = "to",
                            .help = "the directory to create on the server's machine (absolute)",
                            .required = true,
                            .value_name = "DIR"}}},
      .build = Build,
      .render = Render,
  };
}

}  // namespace chronoq::cli
