#include "cli/call.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <exception>

namespace chronoq::cli {

namespace {

constexpr std::string_view kQueuePath = "/camellia/delayQueue/";
constexpr std::string_view kFormType = "application/x-www-form-urlencoded";
// Set by the server on a sendMsg answered by an existing message (http/handlers.h).
constexpr std::string_view kExistingHeader = "x-chronoq-existing";

bool IsExistingHeader(std::string_view name) {
  return std::equal(
      name.begin(), name.end(), kExistingHeader.begin(), kExistingHeader.end(),
      [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}
// The longest this client waits for one answer (keeps deadlines far from overflow).
constexpr std::chrono::milliseconds kMaxWait = std::chrono::hours(24);

// What the user sees for an answer that is not the API's JSON.
std::string Garbage(int http_status, std::string_view body) {
  std::string excerpt(body.substr(0, 80));
  for (char& c : excerpt) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return fmt::format("the server answered HTTP {} without a chronoq JSON answer{}{}", http_status,
                     excerpt.empty() ? "" : ": ", excerpt);
}

}  // namespace

Answer Classify(int http_status, std::string body) {
  Answer a;
  Result<client::Json> parsed = client::Json::Parse(body);
  if (!parsed.has_value() || !parsed->is_object() || !parsed->Has("code") ||
      (*parsed)["code"].type() != client::Json::Type::kNumber) {
    a.error = Garbage(http_status, body);
    a.body = std::move(body);
    return a;
  }
  a.json = std::move(*parsed);
  a.body = std::move(body);
  int64_t code = a.json["code"].AsInt();
  if (code == 200 && http_status == 200) {
    a.exit = kExitOk;
    return a;
  }
  a.exit = kExitRefused;
  const std::string& msg = a.json["msg"].AsString();
  a.error = msg.empty() ? fmt::format("the server answered code {}", code)
                        : fmt::format("{} (code {})", msg, code);
  return a;
}

Result<Session> Session::FromArgs(const ParsedArgs& args) {
  Session s;
  std::optional<std::string> server = args.Get("server");
  s.server = server.has_value() ? *server : client::ChooseServerUrl({});
  Result<client::Endpoint> ep = client::ParseServerUrl(s.server);
  if (!ep.has_value()) {
    return InvalidArgument(fmt::format("option '--server': '{}' is not a server URL: {}", s.server,
                                       ep.error().message()));
  }
  s.endpoint = *ep;
  s.endpoint.tls_options.ca_file = args.Get("ca-file").value_or("");
  s.endpoint.tls_options.cert_file = args.Get("cert-file").value_or("");
  s.endpoint.tls_options.key_file = args.Get("key-file").value_or("");
  if (s.endpoint.tls_options.cert_file.empty() != s.endpoint.tls_options.key_file.empty()) {
    return InvalidArgument("options '--cert-file' and '--key-file' go together");
  }
  CQ_ASSIGN_OR_RETURN(std::optional<std::chrono::milliseconds> timeout,
                      DurationOption(args, "timeout", /*positive=*/true));
  if (timeout.has_value()) {
    if (*timeout > kMaxWait) return InvalidArgument("option '--timeout': at most 1d");
    s.timeout = *timeout;
  }
  s.json = args.Flag("json");
  return s;
}

namespace {

Answer Send(const Session& s, std::string_view method, const std::string& target,
            std::string_view body, std::string_view content_type, std::chrono::milliseconds wait) {
  Answer a;
  Result<client::HttpConnection> conn = client::HttpConnection::Connect(s.endpoint, s.timeout);
  if (!conn.has_value()) {
    a.error = fmt::format("cannot reach the server at {}: {}", s.server, conn.error().message());
    return a;
  }
  // The client reads headers with std::stoul; a malformed answer must not end the process.
  try {
    Result<client::Response> r = conn->Request(method, target, body, content_type, wait);
    if (!r.has_value()) {
      a.error =
          r.error().code() == Errc::kTimeout
              ? fmt::format("the server at {} did not answer within {} ms", s.server, wait.count())
              : fmt::format("no answer from the server at {}: {}", s.server, r.error().message());
      return a;
    }
    a = Classify(r->status, std::move(r->body));
    for (const auto& [name, value] : r->headers) {
      if (IsExistingHeader(name) && value == "true") a.existing = true;
    }
    return a;
  } catch (const std::exception& e) {
    a.error = fmt::format("unreadable answer from the server at {}: {}", s.server, e.what());
    return a;
  }
}

}  // namespace

Answer Session::Post(std::string_view op, const Params& params,
                     std::chrono::milliseconds extra_wait) const {
  // An op that starts with '/' is a path of its own (/chronoq/admin/backup).
  std::string target = op.starts_with('/') ? std::string(op) : fmt::format("{}{}", kQueuePath, op);
  return Send(*this, "POST", target, client::FormEncode(params), kFormType,
              timeout + std::min(extra_wait, kMaxWait));
}

Answer Session::PostJson(std::string_view op, std::string_view json) const {
  return Send(*this, "POST", fmt::format("{}{}", kQueuePath, op), json, "application/json",
              timeout);
}

Answer Session::Get(std::string_view op, const Params& params) const {
  std::string target = fmt::format("{}{}", kQueuePath, op);
  if (!params.empty()) target += "?" + client::FormEncode(params);
  return Send(*this, "GET", target, {}, kFormType, timeout);
}

}  // namespace chronoq::cli
