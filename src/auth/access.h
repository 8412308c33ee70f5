// Who may do what (docs/security.md "Roles"): the caller of a request, protocol-neutral, and the
// one table from operation to the roles allowed. HTTP, gRPC and the dashboard API name the
// operation of each endpoint or method and ask Allows(); no protocol holds a rule of its own.
//
// Plain value types and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace chronoq::auth {

enum class Role : uint8_t { kProducer, kConsumer, kAdmin };

// Every operation a protocol serves. "Server-wide" ones see every namespace (metrics, the
// monitor data, the node's health state): only an admin of the unnamed namespace `*` may do
// them.
enum class Operation : uint8_t {
  kSend,              // sendMsg, Send
  kSendBatch,         // sendMsgBatch, SendBatch
  kGet,               // getMsg, Get
  kUpdate,            // updateMsg, Update
  kCount,             // countMsg, Count
  kDelete,            // deleteMsg, Delete
  kPull,              // pullMsg, Pull, Consume
  kLongPoll,          // longPollingMsg, Pull with wait_millis
  kAck,               // ackMsg, Ack
  kAckBatch,          // ackMsgBatch, Consume's acks
  kTouch,             // touchMsg, Touch: a consumer's lease
  kList,              // listMsg, List: browses payloads of every status
  kTopicInfo,         // getTopicInfo, getTopicInfoList, TopicInfo, ListTopics: counts only
  kReadTopicConfig,   // getTopicConfig
  kWriteTopicConfig,  // setTopicConfig, deleteTopicConfig, pauseTopic, resumeTopic
  kPurge,             // purgeTopic
  kRedrive,           // redriveMsg
  kHistory,           // getMsgHistory, GetMsgHistory: a message's transitions
  kImport,            // importMsgBatch (server-wide: restores stored state, docs/export-import.md)
  kBackup,            // POST /chronoq/admin/backup (server-wide: the whole store)
  kMonitorData,       // getMonitorData (server-wide)
  kMetrics,           // GET /metrics (server-wide)
  kSetHealth,         // /camellia/health/online, offline (server-wide)
  kDashboard,         // /dashboard/api/*: an admin's; lists the caller's namespace only
  kTestControl,       // /chronoq/test/*: open (they exist only in test mode, --test-clock)
  kHealthCheck,       // /camellia/health/check, status: open to everyone, no token
  kDashboardAssets,   // /dashboard's static files (no data): open to everyone, no token
};
inline constexpr size_t kOperationCount = static_cast<size_t>(Operation::kDashboardAssets) + 1;

// Who sent a request. `anonymous`: no tokens are configured, every request may do everything
// in the unnamed namespace (chronoq without authentication). `ns` empty: the unnamed namespace
// (tokens of namespace `*`).
struct Caller {
  bool anonymous = true;
  std::string ns;
  Role role = Role::kAdmin;
};

// "producer", "consumer", "admin".
std::string_view RoleName(Role r);
std::optional<Role> ParseRole(std::string_view text);
// A short phrase naming the operation in error sentences ("send messages").
std::string_view OperationName(Operation op);
// The roles the operation needs, for error sentences ("producer or admin").
std::string_view RolesAllowed(Operation op);
// True when the operation reads or changes more than one namespace.
bool ServerWide(Operation op);
// True when the operation needs no token (health checks, the dashboard's static files, the test
// controls of a server in test mode).
bool Open(Operation op);

// The rule table: may `caller` do `op`? An anonymous caller may do everything; an Open operation
// everyone; a server-wide operation needs an admin of the unnamed namespace.
bool Allows(const Caller& caller, Operation op);

}  // namespace chronoq::auth
