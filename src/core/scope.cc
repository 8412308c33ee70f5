#include "core/scope.h"

namespace chronoq::core {

bool IsValidNamespace(std::string_view ns) {
  if (ns.empty() || ns.size() > kMaxNamespaceBytes) return false;
  for (char c : ns) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string ScopedTopic(std::string_view ns, std::string_view topic) {
  if (ns.empty()) return std::string(topic);
  std::string out;
  out.reserve(ns.size() + 1 + topic.size());
  out.append(ns).push_back(kScopeSeparator);
  out.append(topic);
  return out;
}

bool SplitScopedTopic(std::string_view internal, std::string_view* ns, std::string_view* topic) {
  const size_t sep = internal.find(kScopeSeparator);
  if (sep == std::string_view::npos) {
    *ns = {};
    *topic = internal;
    return true;
  }
  *ns = internal.substr(0, sep);
  *topic = internal.substr(sep + 1);
  return IsValidNamespace(*ns);
}

std::optional<std::string_view> ClientTopic(std::string_view ns, std::string_view internal) {
  std::string_view n;
  std::string_view t;
  if (!SplitScopedTopic(internal, &n, &t) || n != ns) return std::nullopt;
  return t;
}

std::string DisplayTopic(std::string_view internal) {
  std::string_view n;
  std::string_view t;
  if (!SplitScopedTopic(internal, &n, &t) || n.empty()) return std::string(internal);
  std::string out(n);
  out.push_back('/');
  out.append(t);
  return out;
}

}  // namespace chronoq::core
