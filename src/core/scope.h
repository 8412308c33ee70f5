// Namespaces of topics (docs/security.md "Namespaces"): a token's namespace scopes every topic
// name its client uses. The service stores the topic `orders` of namespace `shop` under the
// internal name "shop\x1Forders": the namespace, the unit-separator control character, the
// client's name. A client's topic name can never contain a control character (validation.h), so
// no client name (of any namespace, or of a server without tokens) can spell another namespace's
// internal name, and the split is unambiguous. The unnamed namespace (no tokens, or a token of
// namespace `*`) uses client names as they are: what chronoq stored before namespaces existed.
//
// Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace chronoq::core {

inline constexpr char kScopeSeparator = '\x1F';
inline constexpr size_t kMaxNamespaceBytes = 64;

// 1..64 characters among A-Z a-z 0-9 '_' '.' '-'.
bool IsValidNamespace(std::string_view ns);

// The internal name of the client's `topic` in namespace `ns` ("" is the unnamed namespace: the
// name itself).
std::string ScopedTopic(std::string_view ns, std::string_view topic);

// The client's name of the internal topic name `internal` for a client of namespace `ns`, or
// nullopt when that topic is not in `ns` (another namespace's topic, or for a named namespace an
// unscoped one).
std::optional<std::string_view> ClientTopic(std::string_view ns, std::string_view internal);

// Splits an internal name into its namespace ("" when unscoped) and client name. False when the
// name holds a separator but not after a valid namespace.
bool SplitScopedTopic(std::string_view internal, std::string_view* ns, std::string_view* topic);

// How an operator (metrics, the dashboard, getMonitorData) reads an internal name: "shop/orders"
// for a scoped topic, the name itself otherwise.
std::string DisplayTopic(std::string_view internal);

}  // namespace chronoq::core
