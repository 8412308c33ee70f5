#include "auth/access.h"

#include <array>

namespace chronoq::auth {
namespace {

// Bits of the roles allowed, by Operation.
constexpr uint8_t kP = 1 << static_cast<int>(Role::kProducer);
constexpr uint8_t kC = 1 << static_cast<int>(Role::kConsumer);
constexpr uint8_t kA = 1 << static_cast<int>(Role::kAdmin);

struct Rule {
  uint8_t roles;
  bool server_wide;  // or open, for kP | kC | kA (no token needed)
  std::string_view name;
  std::string_view roles_text;
};

// THE table (docs/security.md "Roles" shows it): admin may do everything.
constexpr std::array<Rule, kOperationCount> kRules = {{
    {kP | kA, false, "send messages", "producer or admin"},                     // kSend
    {kP | kA, false, "send messages", "producer or admin"},                     // kSendBatch
    {kP | kC | kA, false, "read messages", "producer, consumer or admin"},      // kGet
    {kP | kA, false, "update messages", "producer or admin"},                   // kUpdate
    {kP | kA, false, "count messages", "producer or admin"},                    // kCount
    {kP | kA, false, "delete messages", "producer or admin"},                   // kDelete
    {kC | kA, false, "pull messages", "consumer or admin"},                     // kPull
    {kC | kA, false, "pull messages", "consumer or admin"},                     // kLongPoll
    {kC | kA, false, "ack messages", "consumer or admin"},                      // kAck
    {kC | kA, false, "ack messages", "consumer or admin"},                      // kAckBatch
    {kC | kA, false, "extend a delivery's ack deadline", "consumer or admin"},  // kTouch
    {kA, false, "list a topic's messages", "admin"},                            // kList
    {kP | kC | kA, false, "read topic counts", "producer, consumer or admin"},  // kTopicInfo
    {kA, false, "read a topic's configuration", "admin"},                       // kReadTopicConfig
    {kA, false, "change a topic's configuration", "admin"},                     // kWriteTopicConfig
    {kA, false, "purge a topic", "admin"},                                      // kPurge
    {kA, false, "redrive dead letters", "admin"},                               // kRedrive
    {kP | kC | kA, false, "read message histories", "producer, consumer or admin"},  // kHistory
    {kA, true, "import messages", "admin of namespace '*'"},                         // kImport
    {kA, true, "back up the store", "admin of namespace '*'"},                       // kBackup
    {kA, true, "read the monitor data", "admin of namespace '*'"},                   // kMonitorData
    {kA, true, "read the metrics", "admin of namespace '*'"},                        // kMetrics
    {kA, true, "set the node online or offline", "admin of namespace '*'"},          // kSetHealth
    {kA, false, "use the dashboard", "admin"},                // kDashboard: scoped by its handlers
    {kP | kC | kA, true, "use the test controls", "anyone"},  // kTestControl
    {kP | kC | kA, false, "check health", "anyone"},          // kHealthCheck
    {kP | kC | kA, false, "load the dashboard's files", "anyone"},  // kDashboardAssets
}};

const Rule& RuleOf(Operation op) { return kRules[static_cast<size_t>(op)]; }

}  // namespace

std::string_view RoleName(Role r) {
  switch (r) {
    case Role::kProducer:
      return "producer";
    case Role::kConsumer:
      return "consumer";
    case Role::kAdmin:
      return "admin";
  }
  return "admin";
}

std::optional<Role> ParseRole(std::string_view text) {
  for (Role r : {Role::kProducer, Role::kConsumer, Role::kAdmin}) {
    if (text == RoleName(r)) return r;
  }
  return std::nullopt;
}

std::string_view OperationName(Operation op) { return RuleOf(op).name; }
std::string_view RolesAllowed(Operation op) { return RuleOf(op).roles_text; }
bool Open(Operation op) {
  return op == Operation::kHealthCheck || op == Operation::kDashboardAssets ||
         op == Operation::kTestControl;
}
bool ServerWide(Operation op) { return RuleOf(op).server_wide && !Open(op); }

bool Allows(const Caller& caller, Operation op) {
  if (caller.anonymous || Open(op)) return true;
  const Rule& rule = RuleOf(op);
  if (rule.server_wide && !caller.ns.empty()) return false;
  return (rule.roles & (1 << static_cast<int>(caller.role))) != 0;
}

}  // namespace chronoq::auth
