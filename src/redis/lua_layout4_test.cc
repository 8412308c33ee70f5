// Layout 4's ended records (lua_layout4.h, docs/redis.md "Format 4 (design, issue 20)", "Ended
// records") on the harness's real redis-server: records are fields of hash buckets, so no
// PEXPIRE deletes them; the trim of the ended sets must delete exactly the records whose
// retention is over, with their history lists, in bounded calls, and tell when the next one is
// due. And the member: its bytes order messages of one score by seq, and name the record.
#include "redis/lua_layout4.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "tests/testutil/redis_servers.h"

namespace chronoq::redis {
namespace {

// ARGV[1] = n: ended messages i = 1..n, of status 4 + i % 3 (statuses 4, 5, 6), ended at
// 1000 + i, each with a record in its bucket and a history list.
constexpr char kEnded[] = R"lua(
for i = 1, tonumber(ARGV[1]) do
  local kid = '\1'..string.sub(string.format('%032x', i * 7919), 17)
  local b = i % 256
  redis.call('HSET', P..'b:'..b, kid, 'record '..i)
  redis.call('RPUSH', P..'h:'..kid, 'entry')
  redis.call('ZADD', P..'X'..(4 + i % 3), 1000 + i, m4_member(i, b, kid))
end
)lua";

// For each i = 1..n: 1 when its record is still there, 0 when not; then the same for its
// history list; then the members left in X4..X6.
constexpr char kLeft[] = R"lua(
local rec, hist = {}, {}
for i = 1, tonumber(ARGV[1]) do
  local kid = '\1'..string.sub(string.format('%032x', i * 7919), 17)
  rec[i] = redis.call('HEXISTS', P..'b:'..(i % 256), kid)
  hist[i] = redis.call('EXISTS', P..'h:'..kid)
end
return {rec, hist, redis.call('ZCARD', P..'X4') + redis.call('ZCARD', P..'X5') +
                   redis.call('ZCARD', P..'X6')}
)lua";

// ARGV: status, cutoff, limit, history ('1' or ''). Answers {how many went, next end or ''}.
constexpr char kTrim[] = R"lua(
local n, nxt = x4_trim(tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), ARGV[4] == '1')
return {n, nxt or ''}
)lua";

class Layout4Test : public ::testing::Test {
 protected:
  testutil::RedisReply Run(const char* body, const std::vector<std::string>& argv) {
    Result<testutil::RedisConn> c = testutil::RedisConn::Connect(
        testutil::SharedDeployment<testutil::RedisStandalone>()->port(), {},
        std::chrono::seconds(30));
    EXPECT_TRUE(c.has_value());
    if (!c.has_value()) return {};
    std::vector<std::string> args = {
        "EVAL", std::string("local P = KEYS[1]\n") + CQ_LUA_LAYOUT4_RECORDS + body, "1",
        "cq:{l4:" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
            "}:"};
    args.insert(args.end(), argv.begin(), argv.end());
    Result<testutil::RedisReply> r = c->Command(args);
    EXPECT_TRUE(r.has_value() && !r->is_error()) << (r.has_value() ? r->ToString() : "");
    return r.has_value() ? *r : testutil::RedisReply{};
  }
  std::pair<int64_t, std::string> Trim(int status, int64_t cutoff, int limit, bool history) {
    testutil::RedisReply r = Run(kTrim, {std::to_string(status), std::to_string(cutoff),
                                         std::to_string(limit), history ? "1" : ""});
    if (r.elements.size() != 2) return {-1, r.ToString()};
    return {r.elements[0].integer, r.elements[1].str};
  }
};

TEST_F(Layout4Test, EndedRecordsGoWhenTheirRetentionIsOverAndNoSooner) {
  const int kN = 600;
  Run(kEnded, {std::to_string(kN)});
  // Retention over for the messages ended at or before 1300 (i <= 300).
  int gone = 0;
  for (int st = 4; st <= 6; ++st) {
    auto [n, next] = Trim(st, 1300, 1000, true);
    gone += static_cast<int>(n);
    // The oldest end left of this status: the first i > 300 with 4 + i % 3 == st.
    int first = 301;
    while (4 + first % 3 != st) ++first;
    EXPECT_EQ(next, std::to_string(1000 + first)) << "status " << st;
  }
  EXPECT_EQ(gone, 300);
  testutil::RedisReply left = Run(kLeft, {std::to_string(kN)});
  ASSERT_EQ(left.elements.size(), 3u);
  for (int i = 1; i <= kN; ++i) {
    const int64_t want = i <= 300 ? 0 : 1;
    EXPECT_EQ(left.elements[0].elements[i - 1].integer, want) << "record of message " << i;
    EXPECT_EQ(left.elements[1].elements[i - 1].integer, want) << "history of message " << i;
  }
  EXPECT_EQ(left.elements[2].integer, 300);
}

// One call deletes at most `limit` (other topics' scripts wait at most that long) and tells
// the next end, so the next call (or the sweep) goes on where it stopped.
TEST_F(Layout4Test, ATrimIsBoundedAndGoesOnWhereItStopped) {
  const int kN = 3000;  // 1,000 of status 4 (i = 3, 6, ..., 3000)
  Run(kEnded, {std::to_string(kN)});
  auto [n1, next1] = Trim(4, 5000, 400, false);
  EXPECT_EQ(n1, 400);
  EXPECT_EQ(next1, std::to_string(1000 + 3 * 401));
  auto [n2, next2] = Trim(4, 5000, 400, false);
  EXPECT_EQ(n2, 400);
  auto [n3, next3] = Trim(4, 5000, 400, false);
  EXPECT_EQ(n3, 200);
  EXPECT_EQ(next3, "");  // nothing of status 4 left
  testutil::RedisReply left = Run(kLeft, {std::to_string(kN)});
  ASSERT_EQ(left.elements.size(), 3u);
  for (int i = 1; i <= kN; ++i) {
    EXPECT_EQ(left.elements[0].elements[i - 1].integer, i % 3 == 0 ? 0 : 1) << i;
    // A topic without history has no lists; the trim then spends no command on them.
    EXPECT_EQ(left.elements[1].elements[i - 1].integer, 1) << i;
  }
}

// Members of one score come out in seq order (their bytes), whatever their key ids, and name
// their record's bucket and key id.
TEST_F(Layout4Test, MembersOfOneScoreAreInSeqOrderAndNameTheirRecord) {
  testutil::RedisReply r = Run(R"lua(
local seqs = {1, 255, 256, 65535, 65536, 16777216, 4294967296, 281474976710655}
local kids = {'zzz', '\1'..string.rep('\255', 16), 'a', '\1'..string.rep('\0', 16)}
for i, s in ipairs(seqs) do
  redis.call('ZADD', P..'z', 5, m4_member(s, (i * 37) % 256, kids[i % 4 + 1]))
end
local out = {}
for _, m in ipairs(redis.call('ZRANGE', P..'z', 0, -1)) do
  out[#out+1] = string.format('%d %d %d', struct.unpack('>I6', m), m4_bucket(m), #m4_kid(m))
end
return out
)lua",
                               {});
  std::vector<std::string> got;
  for (const testutil::RedisReply& e : r.elements) got.push_back(e.str);
  EXPECT_EQ(got, (std::vector<std::string>{"1 37 17", "255 74 1", "256 111 17", "65535 148 3",
                                           "65536 185 17", "16777216 222 1", "4294967296 3 17",
                                           "281474976710655 40 3"}));
}

}  // namespace
}  // namespace chronoq::redis
