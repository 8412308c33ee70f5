// The nghttp2 engine's methods (h2_routes.h): every unary method of chronoq.v1.DelayQueue, by
// path, over unary_methods.h.
#include "grpc_api/h2_routes.h"

#include <memory>
#include <unordered_map>

#include "chronoq/v1/delay_queue.pb.h"
#include "grpc_api/h2_wire.h"
#include "grpc_api/unary_methods.h"

namespace chronoq::grpc_api {
namespace {

// The engine-neutral call of `c`, answering into `*resp` (kept until the answer is encoded).
template <class Resp>
UnaryCall Bind(H2Call& c, Method m, std::unique_ptr<Resp> resp) {
  UnaryCall u;
  u.api = c.api;
  u.method = m;
  u.authorization = std::move(c.authorization);
  u.finish = [resp = std::move(resp), reply = std::move(c.reply)](int code,
                                                                  std::string message) mutable {
    reply(code == 0 ? H2Answer{0, {}, ResponsePtr(resp.release())}
                    : H2Answer{code, std::move(message), {}});
  };
  return u;
}

using Runner = void (*)(H2Call&, Method, service::LongPollTicket*);

template <class Req>
bool Parse(H2Call& c, Req* req) {
  if (req->ParseFromArray(c.request.data(), static_cast<int>(c.request.size()))) return true;
  c.reply(H2Answer{kGrpcInternal, "the request cannot be parsed as " + req->GetTypeName(), {}});
  return false;
}

// A request larger than this is not kept in its thread's reused message after its call.
constexpr size_t kKeptRequestBytes = 64 * 1024;

template <class Req, class Resp, void (*Fn)(UnaryCall, const Req&, Resp*)>
void Run(H2Call& c, Method m, service::LongPollTicket*) {
  // Parsed into a message the thread reuses: its strings' buffers stay allocated from call to
  // call (a parse clears it first). The methods read the request only until they return (what
  // they keep, they copy), and no call starts inside another on the same thread.
  thread_local Req req;
  if (Parse(c, &req)) {
    auto resp = std::make_unique<Resp>();
    Resp* out = resp.get();
    Fn(Bind(c, m, std::move(resp)), req, out);
  }
  if (c.request.size() > kKeptRequestBytes) req = Req();
}

// Pull: with wait_millis a parked long poll.
void RunPull(H2Call& c, Method m, service::LongPollTicket* ticket) {
  v1::PullRequest req;
  if (!Parse(c, &req)) return;
  auto resp = std::make_unique<v1::PullResponse>();
  v1::PullResponse* out = resp.get();
  if (!req.has_wait_millis()) return unary::Pull(Bind(c, m, std::move(resp)), req, out);
  std::function<bool()> alive = std::move(c.alive);
  *ticket = unary::LongPull(Bind(c, m, std::move(resp)), req, out, std::move(alive));
}

struct Route {
  Method method;
  Runner run;
};

const std::unordered_map<std::string_view, Route>& Routes() {
  using namespace v1;  // NOLINT(google-build-using-namespace): the table's type names
  static const auto* routes = new std::unordered_map<std::string_view, Route>{
#define CQ_ROUTE(Name, Req, Resp)                                                       \
  {                                                                                     \
    "/chronoq.v1.DelayQueue/" #Name, { Method::k##Name, &Run<Req, Resp, &unary::Name> } \
  }
      CQ_ROUTE(Send, SendRequest, SendResponse),
      CQ_ROUTE(SendBatch, SendBatchRequest, SendBatchResponse),
      CQ_ROUTE(Get, MessageRef, Message),
      CQ_ROUTE(GetMsgHistory, MessageRef, MsgHistory),
      CQ_ROUTE(Delete, DeleteRequest, DeleteResponse),
      CQ_ROUTE(Update, UpdateRequest, Message),
      CQ_ROUTE(Touch, TouchRequest, Message),
      CQ_ROUTE(Count, CountRequest, Message),
      CQ_ROUTE(List, ListRequest, ListResponse),
      CQ_ROUTE(Ack, AckRequest, AckResponse),
      CQ_ROUTE(TopicInfo, TopicRef, TopicInfoResponse),
      CQ_ROUTE(ListTopics, ListTopicsRequest, ListTopicsResponse),
      CQ_ROUTE(GetTopicConfig, TopicRef, TopicConfig),
      CQ_ROUTE(SetTopicConfig, TopicConfig, TopicConfig),
      CQ_ROUTE(DeleteTopicConfig, TopicRef, DeleteResponse),
      CQ_ROUTE(Purge, PurgeRequest, CountResponse),
      CQ_ROUTE(Redrive, RedriveRequest, CountResponse),
      CQ_ROUTE(GetMonitorData, GetMonitorDataRequest, MonitorData),
#undef CQ_ROUTE
      {"/chronoq.v1.DelayQueue/Pull", {Method::kPull, &RunPull}},
  };
  return *routes;
}

}  // namespace

void MessageDeleter::operator()(google::protobuf::MessageLite* m) const { delete m; }

void RunUnary(std::string_view path, H2Call call, service::LongPollTicket* ticket) {
  const auto& routes = Routes();
  auto it = routes.find(path);
  if (it == routes.end()) {
    return call.reply(H2Answer{kGrpcUnimplemented, "unknown method " + std::string(path), {}});
  }
  it->second.run(call, it->second.method, ticket);
}

void DispatchUnary(const ApiContext* api, H2UnaryRequest r, H2Reply reply,
                   std::shared_ptr<std::atomic<bool>>* gone, service::LongPollTicket* ticket) {
  constexpr auto kNoDeadline = std::chrono::steady_clock::time_point::max();
  // A waiting Pull takes no message this close to its deadline (as delay_queue_service.cc's).
  constexpr std::chrono::milliseconds kDeadlineMargin{20};
  if (r.deadline != kNoDeadline && std::chrono::steady_clock::now() >= r.deadline) {
    return reply(H2Answer{kGrpcDeadlineExceeded, "Deadline Exceeded", {}});
  }
  // One length-prefixed message, uncompressed.
  const std::string_view b = r.body;
  if (b.size() < kGrpcPrefixBytes || ReadGrpcPrefix(b.data()).compressed ||
      ReadGrpcPrefix(b.data()).length != b.size() - kGrpcPrefixBytes) {
    return reply(H2Answer{kGrpcInternal, "the request is not one uncompressed gRPC message", {}});
  }
  H2Call call;
  call.api = api;
  call.authorization = std::move(r.authorization);
  call.request = b.substr(kGrpcPrefixBytes);
  call.reply = std::move(reply);
  if (r.path == "/chronoq.v1.DelayQueue/Pull") {
    *gone = std::make_shared<std::atomic<bool>>(false);
    const auto until = r.deadline == kNoDeadline ? r.deadline : r.deadline - kDeadlineMargin;
    call.alive = [gone = *gone, until] {
      return !gone->load() && std::chrono::steady_clock::now() < until;
    };
  }
  RunUnary(r.path, std::move(call), ticket);
}

}  // namespace chronoq::grpc_api
