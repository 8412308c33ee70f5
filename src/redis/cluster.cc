#include "redis/cluster.h"

#include <fmt/format.h>

#include <charconv>
#include <future>

namespace chronoq::redis {
namespace {

// CRC16-CCITT (XMODEM), the checksum Redis Cluster hashes keys with.
uint16_t Crc16(std::string_view s) {
  uint16_t crc = 0;
  for (unsigned char c : s) {
    crc ^= static_cast<uint16_t>(c) << 8;
    for (int i = 0; i < 8; ++i) {
      crc = (crc & 0x8000) != 0 ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                                : static_cast<uint16_t>(crc << 1);
    }
  }
  return crc;
}

std::string NodeKey(const std::string& host, int port) { return fmt::format("{}:{}", host, port); }

// "MOVED 3999 127.0.0.1:6381" -> slot, host, port.
bool ParseRedirect(const std::string& msg, int* slot, std::string* host, int* port) {
  size_t a = msg.find(' ');
  size_t b = a == std::string::npos ? a : msg.find(' ', a + 1);
  if (b == std::string::npos) return false;
  std::string_view slot_s(msg.data() + a + 1, b - a - 1);
  std::string_view addr(msg.data() + b + 1, msg.size() - b - 1);
  size_t colon = addr.rfind(':');
  if (colon == std::string_view::npos) return false;
  *host = std::string(addr.substr(0, colon));
  std::from_chars(slot_s.data(), slot_s.data() + slot_s.size(), *slot);
  std::from_chars(addr.data() + colon + 1, addr.data() + addr.size(), *port);
  return *port > 0;
}

}  // namespace

int HashSlot(std::string_view key) {
  size_t open = key.find('{');
  if (open != std::string_view::npos) {
    size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  return Crc16(key) & 16383;
}

RedisClusterClient::RedisClusterClient(EventLoop* loop, ConnectionOptions base,
                                       std::vector<RedisEndpoint> seeds)
    : loop_(loop), base_(std::move(base)), seeds_(std::move(seeds)) {}

RedisClusterClient::~RedisClusterClient() {
  std::map<std::string, std::unique_ptr<RedisConnection>> nodes;
  {
    base::MutexLock lock(mu_);
    closing_ = true;
    nodes.swap(nodes_);
  }
  nodes.clear();  // each destructor fails what is pending and closes
}

Result<std::unique_ptr<RedisClusterClient>> RedisClusterClient::Connect(
    EventLoop* loop, ConnectionOptions base, std::vector<RedisEndpoint> seeds) {
  std::unique_ptr<RedisClusterClient> c(
      new RedisClusterClient(loop, std::move(base), std::move(seeds)));
  CQ_RETURN_IF_ERROR(c->LoadSlots());
  return c;
}

RedisConnection* RedisClusterClient::Node(const std::string& host, int port) {
  std::string key = NodeKey(host, port);
  auto it = nodes_.find(key);
  if (it == nodes_.end()) {
    ConnectionOptions o = base_;
    o.endpoint = RedisEndpoint{host, port};
    o.db = 0;
    it = nodes_.emplace(key, std::make_unique<RedisConnection>(loop_, o)).first;
  }
  return it->second.get();
}

Status RedisClusterClient::LoadSlots() {
  std::string why;
  for (const RedisEndpoint& seed : seeds_) {
    RedisConnection* conn;
    {
      base::MutexLock lock(mu_);
      conn = Node(seed.host, seed.port);
    }
    std::promise<Result<RedisReply>> p;
    conn->Command({"CLUSTER", "SLOTS"}, [&p](Result<RedisReply> r) { p.set_value(std::move(r)); });
    Result<RedisReply> r = p.get_future().get();
    if (!r.has_value() || r->type != RedisReply::Type::kArray) {
      why += fmt::format("{}{}:{}: {}", why.empty() ? "" : "; ", seed.host, seed.port,
                         r.has_value() ? r->str : r.error().message());
      continue;
    }
    base::MutexLock lock(mu_);
    ApplySlots(*r, seed.host);
    return Status::Ok();
  }
  return Unavailable("cannot load the Redis Cluster slot map: " + why);
}

void RedisClusterClient::ApplySlots(const RedisReply& r, const std::string& asked_host) {
  for (const RedisReply& range : r.elements) {
    if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) continue;
    const int lo = static_cast<int>(range.elements[0].integer);
    const int hi = static_cast<int>(range.elements[1].integer);
    std::string host = range.elements[2].elements[0].str;
    if (host.empty()) host = asked_host;
    const int port = static_cast<int>(range.elements[2].elements[1].integer);
    Node(host, port);
    for (int s = std::max(lo, 0); s <= std::min(hi, 16383); ++s) slots_[s] = NodeKey(host, port);
  }
}

void RedisClusterClient::RefreshSlots() {
  std::vector<RedisEndpoint> nodes;
  {
    base::MutexLock lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (refreshing_ || closing_ || now - last_refresh_ < std::chrono::seconds(1)) return;
    refreshing_ = true;
    last_refresh_ = now;
    // Known masters first (the seeds may be gone), then the seeds.
    for (const auto& [key, conn] : nodes_) {
      const size_t colon = key.rfind(':');
      nodes.push_back(RedisEndpoint{key.substr(0, colon), std::stoi(key.substr(colon + 1))});
    }
    for (const RedisEndpoint& s : seeds_) {
      if (!nodes_.contains(NodeKey(s.host, s.port))) nodes.push_back(s);
    }
  }
  AskSlots(std::move(nodes), 0);
}

void RedisClusterClient::AskSlots(std::vector<RedisEndpoint> nodes, size_t i) {
  RedisConnection* conn = nullptr;
  {
    base::MutexLock lock(mu_);
    if (closing_ || i >= nodes.size()) {
      refreshing_ = false;
      return;
    }
    conn = Node(nodes[i].host, nodes[i].port);
  }
  conn->Command({"CLUSTER", "SLOTS"}, [this, nodes = std::move(nodes), i](Result<RedisReply> r) {
    if (r.has_value() && r->type == RedisReply::Type::kArray && !r->elements.empty()) {
      base::MutexLock lock(mu_);
      if (!closing_) ApplySlots(*r, nodes[i].host);
      refreshing_ = false;
      return;
    }
    AskSlots(std::move(nodes), i + 1);
  });
}

RedisConnection* RedisClusterClient::NodeFor(int slot) {
  base::MutexLock lock(mu_);
  const std::string& key = slots_[slot];
  auto it = nodes_.find(key);
  if (it != nodes_.end()) return it->second.get();
  return Node(seeds_.front().host, seeds_.front().port);  // it will say MOVED
}

void RedisClusterClient::Command(std::string_view key, std::vector<std::string> args, Done done) {
  Send(key.empty() ? 0 : HashSlot(key), std::move(args), std::move(done), 0);
}

void RedisClusterClient::Send(int slot, std::vector<std::string> args, Done done, int redirects) {
  RedisConnection* conn = NodeFor(slot);
  std::vector<std::string> copy = args;
  conn->Command(std::move(args), [this, slot, copy = std::move(copy), done = std::move(done),
                                  redirects](Result<RedisReply> r) mutable {
    if (r.has_value() && r->is_error() && redirects < 5 &&
        (r->error_kind() == "MOVED" || r->error_kind() == "ASK")) {
      int to_slot = slot;
      std::string host;
      int port = 0;
      if (ParseRedirect(r->str, &to_slot, &host, &port)) {
        RedisConnection* target;
        {
          base::MutexLock lock(mu_);
          target = Node(host, port);
          if (r->error_kind() == "MOVED") slots_[to_slot] = NodeKey(host, port);
        }
        if (r->error_kind() == "MOVED") {  // this slot now, the whole map in the background
          RefreshSlots();
          Send(slot, std::move(copy), std::move(done), redirects + 1);
        } else {
          target->Command({"ASKING"}, [](Result<RedisReply>) {});
          target->Command(std::move(copy), std::move(done));
        }
        return;
      }
    }
    if (!r.has_value() || (r->is_error() && r->error_kind() == "MOVED")) RefreshSlots();
    done(std::move(r));
  });
}

void RedisClusterClient::Flush(UniqueFunction<void()> done) {
  std::vector<RedisConnection*> all;
  {
    base::MutexLock lock(mu_);
    for (auto& [k, c] : nodes_) all.push_back(c.get());
  }
  if (all.empty()) return done();
  struct Count {
    Count(size_t n, UniqueFunction<void()> d) : left(n), done(std::move(d)) {}
    base::Mutex mu;
    size_t left CQ_GUARDED_BY(mu);
    UniqueFunction<void()> done;  // run by the last reply, without the lock
  };
  auto c = std::make_shared<Count>(all.size(), std::move(done));
  for (RedisConnection* conn : all) {
    conn->Command({"PING"}, [c](Result<RedisReply>) {
      {
        base::MutexLock lock(c->mu);
        if (--c->left > 0) return;
      }
      c->done();
    });
  }
}

}  // namespace chronoq::redis
