// `chronoq export` (data.h): every in-life message of a topic (or of every topic) as JSON lines,
// page by page through listMsg export=true, written as the server wrote each message.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "cli/data.h"

namespace chronoq::cli {
namespace {

constexpr size_t kNpos = std::string_view::npos;

size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  return i;
}

// The end of the JSON value that starts at s[i] (no space before it), or kNpos when it is cut.
size_t SkipValue(std::string_view s, size_t i) {
  if (i >= s.size()) return kNpos;
  if (s[i] == '"') {
    for (++i; i < s.size(); ++i) {
      if (s[i] == '\\') {
        ++i;
      } else if (s[i] == '"') {
        return i + 1;
      }
    }
    return kNpos;
  }
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    while (i < s.size()) {
      const char c = s[i];
      if (c == '"') {
        i = SkipValue(s, i);
        if (i == kNpos) return kNpos;
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if ((c == '}' || c == ']') && --depth == 0) return i + 1;
      ++i;
    }
    return kNpos;
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n' &&
         s[i] != '\r' && s[i] != '\t') {
    ++i;
  }
  return i;
}

// One line per topic of getTopicInfoList: its name and its in-life messages.
struct TopicCount {
  std::string topic;
  int64_t in_life = 0;
};

}  // namespace

Result<std::vector<std::string_view>> RawArrayItems(std::string_view doc, std::string_view key) {
  const Status bad = InvalidArgument(fmt::format("the answer has no '{}' array", key));
  size_t i = SkipSpace(doc, 0);
  if (i >= doc.size() || doc[i] != '{') return bad;
  const std::string quoted = fmt::format("\"{}\"", key);
  i = SkipSpace(doc, i + 1);
  while (i < doc.size() && doc[i] == '"') {
    const size_t key_end = SkipValue(doc, i);
    if (key_end == kNpos) return bad;
    const bool match = doc.substr(i, key_end - i) == quoted;
    i = SkipSpace(doc, key_end);
    if (i >= doc.size() || doc[i] != ':') return bad;
    i = SkipSpace(doc, i + 1);
    if (match) {
      if (i >= doc.size() || doc[i] != '[') return bad;
      std::vector<std::string_view> out;
      i = SkipSpace(doc, i + 1);
      if (i < doc.size() && doc[i] == ']') return out;
      while (i < doc.size()) {
        const size_t end = SkipValue(doc, i);
        if (end == kNpos) return bad;
        out.push_back(doc.substr(i, end - i));
        i = SkipSpace(doc, end);
        if (i < doc.size() && doc[i] == ']') return out;
        if (i >= doc.size() || doc[i] != ',') return bad;
        i = SkipSpace(doc, i + 1);
      }
      return bad;
    }
    const size_t end = SkipValue(doc, i);
    if (end == kNpos) return bad;
    i = SkipSpace(doc, end);
    if (i < doc.size() && doc[i] == ',') i = SkipSpace(doc, i + 1);
  }
  return bad;
}

CommandSpec ExportSpec() {
  return {.name = "export",
          .summary = "Write the messages in life of a topic (or all topics) as JSON lines",
          .details =
              "One JSON object a line: the message object of getMsg with every field and "
              "absolute times (ms since the epoch), plus visibleTime (waiting or ready) "
              "or ackDeadline (being consumed), which chronoq import needs to restore the "
              "state. Reads listMsg pages of 1,000 with export=true: constant memory "
              "whatever the backlog. A live topic is not frozen: a message that changes "
              "status during the export may be written twice (import skips the second); "
              "pause the topic for an exact copy.",
          .options = {{.name = "topic",
                       .help = "the topic to export; absent: every topic getTopicInfoList lists",
                       .value_name = "NAME"},
                      {.name = "out",
                       .help = "the file to write (created or truncated); - or absent: stdout",
                       .value_name = "FILE"}}};
}

int RunExport(const std::vector<std::string>& args) {
  const CommandSpec spec = ExportSpec();
  Result<ParsedArgs> parsed = ParseArgs(spec, args);
  if (parsed.has_value() && parsed->help()) {
    std::fputs(HelpText(spec).c_str(), stdout);
    return kExitOk;
  }
  Result<Session> session =
      parsed.has_value() ? Session::FromArgs(*parsed) : Result<Session>(parsed.error());
  if (!session.has_value()) {
    std::fprintf(stderr, "chronoq export: %s\n(chronoq export --help shows the options)\n",
                 session.error().message().c_str());
    return kExitUsage;
  }
  auto fail = [](std::string_view msg, int code) {
    std::fprintf(stderr, "chronoq export: %.*s\n", static_cast<int>(msg.size()), msg.data());
    return code;
  };

  // The topics, and how many messages each has in life (for the progress line).
  Answer list = session->Get("getTopicInfoList");
  if (list.exit != kExitOk) return fail(list.error, list.exit);
  std::vector<TopicCount> topics;
  const std::optional<std::string> only = parsed->Get("topic");
  for (const client::Json& t : list.json["data"].items()) {
    const std::string& name = t["topic"].AsString();
    if (only && name != *only) continue;
    topics.push_back({name, t["waitingQueueSize"].AsInt() + t["readyQueueSize"].AsInt() +
                                t["ackQueueSize"].AsInt()});
  }
  if (only && topics.empty()) {
    return fail(fmt::format("topic '{}' does not exist on {} (getTopicInfoList does not list "
                            "it): nothing to export",
                            *only, session->server),
                kExitRefused);
  }
  int64_t total = 0;
  for (const TopicCount& t : topics) total += t.in_life;

  const std::string out_name = parsed->Get("out").value_or("-");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(nullptr, &std::fclose);
  std::FILE* out = stdout;
  if (out_name != "-") {
    file.reset(std::fopen(out_name.c_str(), "wb"));
    if (!file) {
      return fail(fmt::format("cannot create --out={}: {}", out_name, std::strerror(errno)),
                  kExitUsage);
    }
    out = file.get();
  }
  Progress progress("export", total);
  int64_t written = 0;
  for (const TopicCount& t : topics) {
    std::string cursor;
    do {
      Params params = {{"topic", t.topic}, {"limit", "1000"}, {"export", "true"}};
      if (!cursor.empty()) params.emplace_back("cursor", cursor);
      Answer page = session->Get("listMsg", params);
      if (page.exit != kExitOk) {
        return fail(fmt::format("listing topic '{}' failed after {} messages were written: {}",
                                t.topic, written, page.error),
                    page.exit);
      }
      Result<std::vector<std::string_view>> items = RawArrayItems(page.body, "delayMsgList");
      if (!items.has_value()) return fail(items.error().message(), kExitUnreachable);
      for (std::string_view item : *items) {
        std::fwrite(item.data(), 1, item.size(), out);
        std::fputc('\n', out);
      }
      written += static_cast<int64_t>(items->size());
      progress.Add(static_cast<int64_t>(items->size()));
      const client::Json& next = page.json["nextCursor"];
      cursor = next.is_null() ? std::string() : next.AsString();
    } while (!cursor.empty());
  }
  progress.Done();
  if (std::fflush(out) != 0 || std::ferror(out)) {
    return fail(fmt::format("writing {} failed: {}", out_name, std::strerror(errno)), kExitRefused);
  }
  std::fprintf(stderr, "exported %lld messages of %zu %s\n", static_cast<long long>(written),
               topics.size(), topics.size() == 1 ? "topic" : "topics");
  return kExitOk;
}

}  // namespace chronoq::cli
