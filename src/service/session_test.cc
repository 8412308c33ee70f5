#include "service/session.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/scheduler.h"
#include "service/masking.h"
#include "tests/testutil/fake_backend.h"

namespace chronoq::service {
namespace {

using Headers = std::vector<std::pair<std::string, std::string>>;

const Headers kReal = {{"Authorization", "Bearer s3cret"}, {"X-Api-Key", "k1"}};
const Headers kMasked = {{"Authorization", "***"}, {"X-Api-Key", "***"}};

core::Callback HttpCallback(Headers headers) {
  core::Callback cb;
  cb.type = core::CallbackType::kHttp;
  cb.url = "http://hooks.example/in";
  cb.headers = std::move(headers);
  return cb;
}

TEST(MaskCallbackHeadersTest, KeepsEachNameAndItsOrderAndHidesEachValue) {
  core::Message m;
  m.record.callback = HttpCallback(kReal);
  const core::Message stored = m;  // shares the callback, as the store's copy does
  MaskCallbackHeaders(m);
  ASSERT_TRUE(m.record.callback);
  EXPECT_EQ(m.record.callback->headers, kMasked);
  EXPECT_EQ(m.record.callback->url, "http://hooks.example/in");  // the rest as it is
  EXPECT_EQ(stored.record.callback->headers, kReal);             // the shared original is untouched
}

TEST(MaskCallbackHeadersTest, LeavesAMessageWithoutHeadersOrCallbackAsItIs) {
  core::Message none;
  MaskCallbackHeaders(none);
  EXPECT_FALSE(none.record.callback);
  core::Message bare;
  bare.record.callback = HttpCallback({});
  const core::Message before = bare;
  MaskCallbackHeaders(bare);
  EXPECT_EQ(bare.record, before.record);
}

template <typename T>
struct Got {
  std::optional<T> value;
  backend::Callback<T> Cb() {
    return [this](T v) { value.emplace(std::move(v)); };
  }
};

// Every message answer of a session masks, in the unnamed namespace and a named one; only a list
// asked to reveal (listMsg export=true) and what the backend stores keep the real values.
class SessionMaskingTest : public ::testing::TestWithParam<const char*> {
 protected:
  SessionMaskingTest()
      : clock_(FromEpochMs(1'700'000'040'000)),
        sched_(&clock_),
        service_(&fake_, &clock_, &sched_, Options()),
        session_(&service_, Caller()) {}

  static ServiceOptions Options() {
    ServiceOptions o;
    o.push_allowed = core::TargetAllowlist::Parse("hooks.example").value();
    return o;
  }
  static auth::Caller Caller() {
    auth::Caller c;
    c.anonymous = std::string(GetParam()).empty();
    c.ns = GetParam();
    return c;
  }

  backend::Sent SendWithHeaders(const std::string& id) {
    SendRequest r;
    r.topic = "t";
    r.msg_id = id;
    r.msg = "m";
    r.delay_millis = 0;
    r.callback = HttpCallback(kReal);
    Got<Result<backend::Sent>> g;
    session_.Send(std::move(r), g.Cb());
    EXPECT_TRUE(g.value && g.value->has_value());
    return **g.value;
  }

  backend::ListPage List(bool reveal) {
    ListRequest l;
    l.topic = "t";
    l.reveal_callback_headers = reveal;
    Got<Result<backend::ListPage>> g;
    session_.List(std::move(l), g.Cb());
    EXPECT_TRUE(g.value && g.value->has_value());
    return **g.value;
  }

  base::ManualClock clock_;
  base::ManualScheduler sched_;
  testutil::FakeBackend fake_;
  QueueService service_;
  Session session_;
};
INSTANTIATE_TEST_SUITE_P(Namespaces, SessionMaskingTest, ::testing::Values("", "shop"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param[0] == '\0' ? "unnamed" : "named");
                         });

TEST_P(SessionMaskingTest, SendGetAndListAnswerMaskedValuesWhileTheStoreKeepsTheRealOnes) {
  const backend::Sent sent = SendWithHeaders("a");
  EXPECT_EQ(sent.message.record.callback->headers, kMasked);
  EXPECT_EQ(sent.message.record.topic, "t");  // in client names
  ASSERT_EQ(fake_.calls().size(), 1u);
  EXPECT_EQ(fake_.calls()[0].send.callback->headers, kReal);  // stored as given

  Got<Result<core::Message>> got;
  session_.Get(MessageRef{"t", "a"}, got.Cb());
  ASSERT_TRUE(got.value && got.value->has_value());
  EXPECT_EQ((*got.value)->record.callback->headers, kMasked);

  backend::ListPage page = List(false);
  ASSERT_EQ(page.messages.size(), 1u);
  EXPECT_EQ(page.messages[0].record.callback->headers, kMasked);
  EXPECT_EQ(page.messages[0].record.topic, "t");

  page = List(true);  // listMsg export=true: what chronoq import must restore
  ASSERT_EQ(page.messages.size(), 1u);
  EXPECT_EQ(page.messages[0].record.callback->headers, kReal);
  EXPECT_EQ(page.messages[0].record.topic, "t");

  // A pull (and so a long poll and Consume, which end in the same answer): dead letters keep
  // their callback and reach consumers.
  Got<Result<Messages>> pulled;
  session_.Pull(PullRequest{"t", 10, {}}, pulled.Cb());
  ASSERT_TRUE(pulled.value && pulled.value->has_value());
  ASSERT_EQ((*pulled.value)->size(), 1u);
  EXPECT_EQ((**pulled.value)[0].record.callback->headers, kMasked);

  // A second read is masked again: the masking changed no stored message.
  Got<Result<core::Message>> again;
  session_.Get(MessageRef{"t", "a"}, again.Cb());
  ASSERT_TRUE(again.value && again.value->has_value());
  EXPECT_EQ((*again.value)->record.callback->headers, kMasked);
}

// The send and pull answers are masked where the service builds them (the session adds no
// wrapper of its own to them in the unnamed namespace): a batch's items and a long poll's
// messages too, in client names.
TEST_P(SessionMaskingTest, SendBatchAndLongPollAnswerMaskedValues) {
  SendBatchRequest batch;
  batch.topic = "t";
  for (const char* id : {"b1", "b2"}) {
    SendRequest r;
    r.msg_id = id;
    r.msg = "m";
    r.delay_millis = 0;
    r.callback = HttpCallback(kReal);
    batch.msgs.push_back(std::move(r));
  }
  Got<Result<std::vector<Result<backend::Sent>>>> sent;
  session_.SendBatch(std::move(batch), sent.Cb());
  ASSERT_TRUE(sent.value && sent.value->has_value());
  ASSERT_EQ((*sent.value)->size(), 2u);
  for (const Result<backend::Sent>& item : **sent.value) {
    ASSERT_TRUE(item.has_value()) << item.error().ToString();
    EXPECT_EQ(item->message.record.callback->headers, kMasked);
    EXPECT_EQ(item->message.record.topic, "t");
  }

  LongPollRequest poll;
  poll.pull = PullRequest{"t", 10, {}};
  poll.timeout_millis = 1'000;
  Got<Result<Messages>> polled;
  session_.LongPoll(std::move(poll), nullptr, polled.Cb());
  if (!polled.value) sched_.Advance(Millis(1'000));
  ASSERT_TRUE(polled.value && polled.value->has_value());
  ASSERT_EQ((*polled.value)->size(), 2u);
  for (const core::Message& m : **polled.value) {
    EXPECT_EQ(m.record.callback->headers, kMasked);
    EXPECT_EQ(m.record.topic, "t");
  }
  backend::ListPage page = List(true);  // stored as given
  ASSERT_EQ(page.messages.size(), 2u);
  EXPECT_EQ(page.messages[0].record.callback->headers, kReal);
}

}  // namespace
}  // namespace chronoq::service
