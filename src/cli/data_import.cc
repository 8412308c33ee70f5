// `chronoq import` (data.h): JSON lines from a file or stdin to importMsgBatch, in batches.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "cli/data.h"
#include "client/json.h"

namespace chronoq::cli {

bool Importer::Add(std::string line, std::string text) {
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ' || text.back() == '\t')) {
    text.pop_back();
  }
  if (text.find_first_not_of(" \t") == std::string::npos) return true;
  ++lines_;
  Result<client::Json> parsed = client::Json::Parse(text);
  if (!parsed.has_value()) {
    Refuse(line, fmt::format("not JSON: {}", parsed.error().message()));
    return true;
  }
  if (!parsed->is_object()) {
    Refuse(line, "not a JSON object (a message as chronoq export writes it)");
    return true;
  }
  if (text.size() + 16 > kImportBatchBytes) {
    Refuse(line, fmt::format("{} bytes, more than one import request carries ({})", text.size(),
                             kImportBatchBytes));
    return true;
  }
  if (!batch_lines_.empty() && body_.size() + text.size() + 2 > kImportBatchBytes) {
    if (!Flush()) return false;
  }
  body_ += batch_lines_.empty() ? "{\"msgs\":[" : ",";
  body_ += text;
  batch_lines_.push_back(std::move(line));
  if (batch_lines_.size() >= kImportBatch) return Flush();
  return true;
}

void Importer::Refuse(std::string_view label, std::string_view why) {
  ++refused_;
  std::fprintf(report_, "%.*s: %.*s\n", static_cast<int>(label.size()), label.data(),
               static_cast<int>(why.size()), why.data());
}

bool Importer::Finish() { return batch_lines_.empty() || Flush(); }

bool Importer::Flush() {
  body_ += "]}";
  Answer a = session_.PostJson("importMsgBatch", body_);
  body_.clear();
  std::vector<std::string> lines = std::move(batch_lines_);
  batch_lines_.clear();
  if (a.exit != kExitOk) {
    error_ = fmt::format("the batch of {} to {} was not imported: {}", lines.front(), lines.back(),
                         a.error);
    error_exit_ = a.exit;
    return false;
  }
  const std::vector<client::Json>& results = a.json["results"].items();
  if (results.size() != lines.size()) {
    error_ = fmt::format("the server answered {} results for the {} lines of {} to {}",
                         results.size(), lines.size(), lines.front(), lines.back());
    error_exit_ = kExitUnreachable;
    return false;
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    const client::Json& r = results[i];
    if (r["code"].AsInt() != 200) {
      Refuse(lines[i], r["msg"].AsString());
    } else if (r["skipped"].AsBool()) {
      ++skipped_;
    } else {
      ++imported_;
    }
  }
  return true;
}

Progress::Progress(std::string what, int64_t total)
    : what_(std::move(what)), total_(total), tty_(isatty(STDERR_FILENO) == 1) {}

void Progress::Add(int64_t n) {
  done_ += n;
  if (!tty_) return;
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  if (now - last_ms_ < 100) return;
  last_ms_ = now;
  if (total_ > 0) {
    std::fprintf(stderr, "\r%s: %lld of %lld messages (%lld%%)   ", what_.c_str(),
                 static_cast<long long>(done_), static_cast<long long>(total_),
                 static_cast<long long>(done_ * 100 / total_));
  } else {
    std::fprintf(stderr, "\r%s: %lld messages   ", what_.c_str(), static_cast<long long>(done_));
  }
}

void Progress::Done() {
  if (tty_)
    std::fprintf(stderr, "\r%s: %lld messages, done.          \n", what_.c_str(),
                 static_cast<long long>(done_));
}

CommandSpec ImportSpec() {
  return {.name = "import",
          .summary = "Import JSON lines written by chronoq export (idempotent by msgId)",
          .details =
              "Reads messages, one JSON object a line, and stores each with its state "
              "(status, trigger and expire times, retry count, ack deadline...) through "
              "importMsgBatch, 1,000 a request. A message whose msgId is in life in its "
              "topic is skipped, so running it twice changes nothing. Lines that are not "
              "JSON or that the server refuses are reported on stderr as 'line N: reason'. "
              "Prints the counts of imported, skipped and refused lines; exits 1 when a "
              "line was refused.",
          .options = {{.name = "in",
                       .help = "the file to read; - or absent: standard input",
                       .value_name = "FILE"}}};
}

int RunImport(const std::vector<std::string>& args) {
  const CommandSpec spec = ImportSpec();
  Result<ParsedArgs> parsed = ParseArgs(spec, args);
  Result<Session> session =
      parsed.has_value() ? Session::FromArgs(*parsed) : Result<Session>(parsed.error());
  if (parsed.has_value() && parsed->help()) {
    std::fputs(HelpText(spec).c_str(), stdout);
    return kExitOk;
  }
  if (!session.has_value()) {
    std::fprintf(stderr, "chronoq import: %s\n(chronoq import --help shows the options)\n",
                 session.error().message().c_str());
    return kExitUsage;
  }
  const std::string in = parsed->Get("in").value_or("-");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(nullptr, &std::fclose);
  std::FILE* f = stdin;
  if (in != "-") {
    file.reset(std::fopen(in.c_str(), "rb"));
    if (!file) {
      std::fprintf(stderr, "chronoq import: cannot open --in=%s: %s\n", in.c_str(),
                   std::strerror(errno));
      return kExitUsage;
    }
    f = file.get();
  }
  Importer importer(*session, stderr);
  Progress progress("import", 0);
  // getline: one line at a time whatever its length, in a buffer reused for the next.
  char* buf = nullptr;
  size_t cap = 0;
  int64_t n = 0;
  bool ok = true;
  for (ssize_t len; ok && (len = ::getline(&buf, &cap, f)) >= 0;) {
    std::string line(buf, static_cast<size_t>(len));
    if (!line.empty() && line.back() == '\n') line.pop_back();
    ++n;
    ok = importer.Add(fmt::format("line {}", n), std::move(line));
    progress.Add(1);
  }
  std::free(buf);
  if (ok) ok = importer.Finish();
  progress.Done();
  if (std::ferror(f)) {
    std::fprintf(stderr, "chronoq import: reading %s failed after line %lld\n", in.c_str(),
                 static_cast<long long>(n));
  }
  std::printf("imported %lld, skipped %lld (already there), refused %lld\n",
              static_cast<long long>(importer.imported()),
              static_cast<long long>(importer.skipped()),
              static_cast<long long>(importer.refused()));
  if (!ok) {
    std::fprintf(stderr,
                 "chronoq import: %s; stopped after line %lld (running it again "
                 "skips what was imported)\n",
                 importer.error().c_str(), static_cast<long long>(n));
    return importer.error_exit();
  }
  return importer.refused() > 0 ? kExitRefused : kExitOk;
}

}  // namespace chronoq::cli
