// grpc.health.v1.Health on the nghttp2 engine (h2_stream.h), answering as gRPC's default health
// service does on the grpc++ engine (grpc_server.cc): one service name is known, "" (the whole
// server), SERVING while the node is online and NOT_SERVING while it is offline
// (QueueService::SetOnline, camellia's /camellia/health/offline) and from the server's Shutdown()
// on; Check of another name: NOT_FOUND; Watch sends the status at once and again at each change
// (SERVICE_UNKNOWN for another name, the stream staying open). No token is asked for, as with
// grpc++ (a load balancer's probe has none).
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "grpc/health/v1/health.pb.h"
#include "grpc_api/h2_stream.h"

namespace chronoq::grpc_api {
namespace {

constexpr int kInvalidArgument = 3;
constexpr int kNotFound = 5;
constexpr int kInternal = 13;

using Pb = grpc::health::v1::HealthCheckResponse;

std::string Encode(Pb::ServingStatus status) {
  Pb resp;
  resp.set_status(status);
  return resp.SerializeAsString();
}

}  // namespace

class H2Services::Health {
 public:
  explicit Health(service::QueueService* service) : service_(service) {
    watcher_ = service_->AddOnlineWatcher([this](bool online) { Set(online, false); });
    Set(service_->online(), false);
  }
  ~Health() { Stop(); }
  Health(const Health&) = delete;
  Health& operator=(const Health&) = delete;

  // NOT_SERVING from now on.
  void Shutdown() {
    Stop();
    Set(false, true);
  }

  // The status of `name`; SERVICE_UNKNOWN for a name other than "".
  Pb::ServingStatus Status(std::string_view name) {
    if (!name.empty()) return Pb::SERVICE_UNKNOWN;
    base::MutexLock lock(mu_);
    return serving_ ? Pb::SERVING : Pb::NOT_SERVING;
  }

  // Writes the status of `name` to `w` now and, for "", at each change until Unwatch(id).
  uint64_t Watch(std::string_view name, std::shared_ptr<H2StreamWriter> w) {
    base::MutexLock lock(mu_);
    if (!name.empty()) {
      w->Write(Encode(Pb::SERVICE_UNKNOWN));
      return 0;
    }
    w->Write(Encode(serving_ ? Pb::SERVING : Pb::NOT_SERVING));
    watchers_.emplace_back(++next_id_, std::move(w));
    return next_id_;
  }
  void Unwatch(uint64_t id) {
    base::MutexLock lock(mu_);
    std::erase_if(watchers_, [id](const auto& e) { return e.first == id; });
  }

 private:
  void Stop() {
    if (watcher_ != 0) service_->RemoveOnlineWatcher(watcher_);
    watcher_ = 0;
  }
  // The service calls this under its lock: writing only queues (and posts to the connection).
  void Set(bool serving, bool final) {
    base::MutexLock lock(mu_);
    if (shut_down_) return;
    shut_down_ = final;
    if (serving == serving_ && initialised_) return;
    initialised_ = true;
    serving_ = serving;
    const std::string message = Encode(serving ? Pb::SERVING : Pb::NOT_SERVING);
    for (auto& [id, w] : watchers_) w->Write(message);
  }

  service::QueueService* service_;
  uint64_t watcher_ = 0;  // the service's, until Shutdown
  base::Mutex mu_;
  bool serving_ CQ_GUARDED_BY(mu_) = false;
  bool initialised_ CQ_GUARDED_BY(mu_) = false;
  bool shut_down_ CQ_GUARDED_BY(mu_) = false;
  uint64_t next_id_ CQ_GUARDED_BY(mu_) = 0;
  std::vector<std::pair<uint64_t, std::shared_ptr<H2StreamWriter>>> watchers_ CQ_GUARDED_BY(mu_);
};

namespace {

// Check and Watch: one request message each.
class HealthCall final : public H2StreamHandler {
 public:
  HealthCall(H2Services::Health* health, std::shared_ptr<H2StreamWriter> w, bool watch)
      : health_(health), w_(std::move(w)), watch_(watch) {}

  void OnMessage(std::string_view bytes) override {
    if (got_ || w_ == nullptr) return;
    got_ = true;
    grpc::health::v1::HealthCheckRequest req;
    if (!req.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      return w_->Finish(kInvalidArgument, "could not parse request");
    }
    if (watch_) {
      watch_id_ = health_->Watch(req.service(), w_);
      return;
    }
    const Pb::ServingStatus status = health_->Status(req.service());
    if (status == Pb::SERVICE_UNKNOWN) return w_->Finish(kNotFound, "service name unknown");
    w_->Write(Encode(status));
    w_->Finish(0, {});
  }
  void OnHalfClose() override {
    if (!got_ && w_ != nullptr) w_->Finish(kInternal, "the request holds no message");
  }
  void OnClose() override {
    if (watch_id_ != 0) health_->Unwatch(watch_id_);
    watch_id_ = 0;
    w_.reset();
  }

 private:
  H2Services::Health* health_;
  std::shared_ptr<H2StreamWriter> w_;
  const bool watch_;
  bool got_ = false;
  uint64_t watch_id_ = 0;
};

}  // namespace

H2Services::H2Services(const ApiContext* api) : health_(std::make_unique<Health>(api->service)) {}
H2Services::~H2Services() = default;

void H2Services::Shutdown() { health_->Shutdown(); }

const std::vector<std::string>& H2Services::Names() {
  static const auto* names = new std::vector<std::string>{
      "chronoq.v1.DelayQueue", "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"};
  return *names;
}

bool H2Services::Serves(std::string_view path) {
  return path.starts_with("/grpc.") &&
         (path == "/grpc.health.v1.Health/Check" || path == "/grpc.health.v1.Health/Watch" ||
          path == "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo");
}

std::shared_ptr<H2StreamState> H2Services::Open(std::string_view path, int64_t max_message_bytes,
                                                std::function<void()> wake) {
  if (!Serves(path)) return nullptr;
  std::unique_ptr<H2StreamHandler> handler;
  auto state = std::make_shared<H2StreamState>(std::move(wake), max_message_bytes);
  if (path == "/grpc.health.v1.Health/Check" || path == "/grpc.health.v1.Health/Watch") {
    handler = std::make_unique<HealthCall>(health_.get(), state->NewWriter(),
                                           path == "/grpc.health.v1.Health/Watch");
  } else {
    handler = NewReflectionHandler(state->NewWriter());
  }
  state->SetHandler(std::move(handler));
  return state;
}

}  // namespace chronoq::grpc_api
