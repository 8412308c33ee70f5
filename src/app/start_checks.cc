#include "app/start_checks.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <string>

#include "base/log.h"

namespace chronoq::app {
namespace {

constexpr const char* kLog = "cq.app";

}  // namespace

int ExitCodeForStoreOpen(const Status& s) {
  switch (s.code()) {
    case Errc::kInvalidArgument:
      return kExitConfigRefused;
    case Errc::kUnavailable:
      return kExitDataDirInUse;
    default:
      return kExitFailure;
  }
}

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost") return true;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    std::string v6(host.substr(1, host.size() - 2));
    in6_addr a6{};
    if (::inet_pton(AF_INET6, v6.c_str(), &a6) != 1) return false;
    if (IN6_IS_ADDR_LOOPBACK(&a6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127;
  }
  in_addr a4{};
  if (::inet_pton(AF_INET, std::string(host).c_str(), &a4) != 1) return false;
  return (ntohl(a4.s_addr) >> 24) == 127;
}

bool WarnIfOpenToTheNetwork(const config::ServerConfig& cfg) {
  std::string host;
  uint16_t port = 0;
  if (!config::ParseListen(cfg.listen, &host, &port).ok()) return false;  // refused earlier
  // A later check joins here: authentication configured (no tokens exist yet).
  if (IsLoopbackHost(host)) return false;
  CQ_LOG_WARN(kLog,
              "listening on {} (beyond loopback) without authentication: anyone who can reach "
              "this port can send, read and delete messages; listen on 127.0.0.1 or let only "
              "trusted clients reach it (firewall, authenticating proxy)",
              host);
  return true;
}

}  // namespace chronoq::app
