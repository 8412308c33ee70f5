// The bucketed pending set of layout 4 (lua_buckets.h, docs/redis.md "Format 4 (design, issue
// 20)") on the harness's real redis-server: a Lua driver applies the same random operations to
// the buckets and to one plain sorted set and compares every answer (ranges after a position,
// counts, the last score up to a time, cardinality, removals), then checks the buckets themselves:
// in index order they hold exactly the plain set's members in its order, none is empty or over
// BZ_MAX (32) members, and every one is in the listpack encoding. And what it is for: a waiting
// message's entry costs about a third of one in a big sorted set.
#include "redis/lua_buckets.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "tests/testutil/redis_servers.h"

namespace chronoq::redis {
namespace {

// ARGV: seed, operations, workload: 'append' (scores rising with seq, removals from the front:
// sends and pulls), 'random' (scores spread over 1,000 s, removals anywhere: updates, deletes),
// 'ties' (five scores: many messages with one trigger time), 'drain' (as 'random', then
// removals only after the first half: runs of buckets shrink and merge). Answers {differences,
// buckets, members, runs}.
constexpr char kDriver[] = R"lua(
local x = tonumber(ARGV[1])
local function rnd(n) x = (x * 16807) % 2147483647; return x % n end
local ops, mode = tonumber(ARGV[2]), ARGV[3]
local O, L, bad, seq, live = P..'oracle', 3, {}, 0, {}
local function member(s)
  return struct.pack('>I6', s)..string.char(s % 256)..'\1'..string.format('%016x', s * 7919)
end
local function fail(what) if #bad < 20 then bad[#bad+1] = what end end
local function same(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end
local function after_pos(s, m, a) return not a or s > a[1] or (s == a[1] and bz_seq(m) > a[2]) end
local base = 1700000000000
for op = 1, ops do
  local c = rnd(100)
  if mode == 'drain' and op > ops / 2 and #live > 0 and c < 55 then c = 60 end
  if c < 55 or #live == 0 then
    seq = seq + 1
    local score
    if mode == 'append' then score = base + math.floor(seq / 7)
    elseif mode == 'ties' then score = base + rnd(5) * 1000
    else score = base + rnd(1000000) end
    local m = member(seq)
    if rnd(4) > 0 then
      bz_add(L, score, m); redis.call('ZADD', O, score, m); live[#live+1] = m
    else -- a batch, as a send script adds it
      local xs = {score, m}
      for _ = 1, rnd(20) do
        seq = seq + 1
        if mode == 'append' then score = base + math.floor(seq / 7)
        elseif mode == 'ties' then score = base + rnd(5) * 1000
        else score = base + rnd(1000000) end
        xs[#xs+1] = score; xs[#xs+1] = member(seq)
      end
      bz_add_all(L, xs)
      for j = 1, #xs, 2 do redis.call('ZADD', O, xs[j], xs[j+1]); live[#live+1] = xs[j+1] end
    end
  elseif c < 80 then
    local i = 1
    if mode ~= 'append' then i = rnd(#live) + 1 end
    local m = live[i]
    local s = tonumber(redis.call('ZSCORE', O, m))
    if not bz_rem(L, s, m) then fail('removal '..op..': not found') end
    redis.call('ZREM', O, m); table.remove(live, i)
    if bz_rem(L, s, m) then fail('removal '..op..': found twice') end
  elseif c < 90 then
    local lo = base + rnd(1000000)
    local hi = lo + rnd(300000)
    if mode == 'ties' then lo = base + rnd(5) * 1000; hi = lo + rnd(3) * 1000 end
    local a, b = bz_count(L, lo, hi), redis.call('ZCOUNT', O, lo, hi)
    if a ~= b then fail('count '..op..': '..a..' instead of '..b) end
    -- as the scripts count: ZCOUNT's strings, exclusive and infinite bounds
    local los = ({'(', ''})[rnd(2) + 1]..string.format('%d', lo)
    local his = ({'(', ''})[rnd(2) + 1]..string.format('%d', hi)
    if rnd(5) == 0 then los = '-inf' end
    if rnd(5) == 0 then his = '+inf' end
    a, b = bz_count(L, los, his), redis.call('ZCOUNT', O, los, his)
    if a ~= b then fail('count '..op..' '..los..' '..his..': '..a..' instead of '..b) end
  else
    local after, min = nil, '-inf'
    if rnd(3) > 0 and #live > 0 then
      local m = live[rnd(#live) + 1]
      local s = tonumber(redis.call('ZSCORE', O, m))
      after, min = {s, bz_seq(m)}, string.format('%.17g', s)
    end
    local max, limit = base + rnd(1200000), rnd(300) + 1
    local got = bz_range(L, after, max, limit)
    -- enough for `limit` after `after`: those at its score may come before it
    local more = after and redis.call('ZCOUNT', O, min, min) or 0
    local all = redis.call('ZRANGEBYSCORE', O, min, string.format('%.17g', max), 'WITHSCORES',
                           'LIMIT', 0, limit + more)
    local want = {}
    for i = 1, #all, 2 do
      if #want < 2 * limit and after_pos(tonumber(all[i+1]), all[i], after) then
        want[#want+1] = all[i]; want[#want+1] = all[i+1]
      end
    end
    if not same(got, want) then fail('range '..op..': '..#got..' values instead of '..#want) end
    local last = redis.call('ZREVRANGEBYSCORE', O, string.format('%.17g', max), '-inf',
                            'WITHSCORES', 'LIMIT', 0, 1)[2]
    if bz_last(L, max) ~= (last and tonumber(last)) then fail('last '..op) end
  end
end
if bz_card(L) ~= redis.call('ZCARD', O) then fail('cardinality '..bz_card(L)) end
local cat, buckets = {}, 0
for _, im in ipairs(redis.call('ZRANGE', P..'qi'..L, 0, -1)) do
  local k = bz_key(L, im)
  local xs = redis.call('ZRANGE', k, 0, -1, 'WITHSCORES')
  buckets = buckets + 1
  if #xs == 0 then fail('empty bucket '..k) end
  if #xs > 2 * BZ_MAX then fail('bucket of '..(#xs / 2)..' members') end
  if #xs > 0 then
    if redis.call('OBJECT', 'ENCODING', k) ~= 'listpack' then fail('not a listpack: '..k) end
    local ss, sq = struct.unpack('>dI6', im)
    if not after_pos(tonumber(xs[2]), xs[1], {ss, sq - 1}) then fail('before its start: '..k) end
  end
  for i = 1, #xs do cat[#cat+1] = xs[i] end
end
if not same(cat, redis.call('ZRANGE', O, 0, -1, 'WITHSCORES')) then
  fail('the buckets do not hold the plain set in its order')
end
-- The runs: the first starts at the first bucket, each counts exactly its buckets and their
-- members, none holds more than RZ_MAX buckets, and no count is left of a run that went.
local ims, runs = redis.call('ZRANGE', P..'qi'..L, 0, -1), redis.call('ZRANGE', P..'qr'..L, 0, -1)
if ims[1] ~= runs[1] then fail('the first run does not start at the first bucket') end
local r, nb, nm = 0, 0, 0
local function close()
  if r == 0 then return end
  local id = rz_id(runs[r])
  local x = redis.call('HMGET', P..'qc'..L, 'n'..id, 'b'..id)
  if tonumber(x[1]) ~= nm or tonumber(x[2]) ~= nb then
    fail('run '..r..' counts '..tostring(x[1])..'/'..tostring(x[2])..' instead of '..nm..'/'..nb)
  end
  if nb > RZ_MAX then fail('run of '..nb..' buckets') end
end
for _, im in ipairs(ims) do
  if im == runs[r + 1] then close(); r, nb, nm = r + 1, 0, 0 end
  nb, nm = nb + 1, nm + redis.call('ZCARD', bz_key(L, im))
end
close()
if r ~= #runs then fail((#runs - r)..' runs start at no bucket') end
if redis.call('HLEN', P..'qc'..L) ~= 2 * #runs then fail('counts of runs that went are left') end
local all = bz_count(L, '-inf', '+inf')
if all ~= redis.call('ZCARD', O) then fail('count of everything: '..all) end
return {bad, buckets, redis.call('ZCARD', O), #runs}
)lua";

class BucketsTest : public ::testing::Test {
 protected:
  testutil::RedisReply Run(const std::string& script, const std::string& prefix,
                           const std::vector<std::string>& argv) {
    Result<testutil::RedisConn> c = testutil::RedisConn::Connect(
        testutil::SharedDeployment<testutil::RedisStandalone>()->port(), {},
        std::chrono::seconds(60));
    EXPECT_TRUE(c.has_value());
    if (!c.has_value()) return {};
    std::vector<std::string> args = {"EVAL", script, "1", prefix};
    args.insert(args.end(), argv.begin(), argv.end());
    Result<testutil::RedisReply> r = c->Command(args);
    EXPECT_TRUE(r.has_value() && !r->is_error()) << (r.has_value() ? r->ToString() : "");
    return r.has_value() ? *r : testutil::RedisReply{};
  }
  struct Shape {
    int64_t buckets = 0, members = 0, runs = 0;
  };
  // Runs the driver on topic `topic`; answers its shape, failing with each difference.
  Shape Drive(const std::string& topic, int ops, const std::string& mode) {
    testutil::RedisReply r = Run(std::string("local P = KEYS[1]\n") + CQ_LUA_BUCKETS + kDriver,
                                 "cq:{bz:" + topic + "}:", {"42", std::to_string(ops), mode});
    if (r.elements.size() != 4) {
      ADD_FAILURE() << r.ToString();
      return {};
    }
    for (const testutil::RedisReply& d : r.elements[0].elements) ADD_FAILURE() << d.str;
    return {r.elements[1].integer, r.elements[2].integer, r.elements[3].integer};
  }
};

TEST_F(BucketsTest, SendsInTriggerOrderFillWholeBucketsAndPullsEmptyThemFromTheFront) {
  auto [buckets, members, runs] = Drive("append", 5000, "append");
  ASSERT_GT(members, 3000);
  // Full buckets (the last one excepted): an append never splits a bucket in halves.
  EXPECT_LE(buckets, members / 32 + 2) << members << " members";
  EXPECT_LE(runs, buckets / 32 + 1) << buckets << " buckets";
}

TEST_F(BucketsTest, AddsAndRemovalsAnywhereAgreeWithOneSortedSet) {
  auto [buckets, members, runs] = Drive("random", 5000, "random");
  ASSERT_GT(members, 3000);
  EXPECT_LE(buckets, members / 8 + 1) << members << " members";  // merges keep them filled
  EXPECT_LE(runs, buckets / 8 + 1) << buckets << " buckets";
}

TEST_F(BucketsTest, ThousandsOfMessagesWithOneTriggerTimeStayInSendOrder) {
  auto [buckets, members, runs] = Drive("ties", 4000, "ties");
  ASSERT_GT(members, 3000);
  EXPECT_GT(buckets, members / 32);  // they are split by seq, not left in one big bucket
  EXPECT_GE(runs, 1);
}

// The counts' second level (runs of up to 64 buckets with their counts) stays exact through
// run splits (many buckets filled in order and anywhere) and merges (most members removed again).
TEST_F(BucketsTest, RunsOfBucketsCountExactlyThroughSplitsAndMerges) {
  auto [buckets, members, runs] = Drive("manyruns", 20000, "random");
  ASSERT_GT(members, 15000);
  EXPECT_GT(runs, 5) << buckets << " buckets";
  EXPECT_LE(runs, buckets / 8 + 1);
  Shape drained = Drive("drain", 20000, "drain");
  EXPECT_LT(drained.members, members / 2);
  EXPECT_LE(drained.runs, drained.buckets / 8 + 1) << "small runs merge";
}

// What layout 4 is for (issue 20): with the default configuration of the harness's redis-server,
// a waiting message's entry in the pending buckets costs about a third of its entry in one big
// sorted set (50-60 bytes against 140-160 for a 24-byte member; docs/redis.md, "Format 4").
TEST_F(BucketsTest, AnEntryInTheBucketsCostsAThirdOfOneInABigSortedSet) {
  auto used = [&] {
    testutil::RedisReply r =
        Run("return tonumber(string.match(redis.call('INFO', 'memory'), 'used_memory:(%d+)'))",
            "cq:{bz:mem}:", {});
    return r.integer;
  };
  const int kN = 50000;
  const std::string add =
      std::string("local P = KEYS[1]\n") + CQ_LUA_BUCKETS +
      "for i = 1, tonumber(ARGV[1]) do\n"
      "  local m = struct.pack('>I6', i)..'\\7\\1'..string.format('%016x', i * 7919)\n"
      "  if ARGV[2] == 'buckets' then bz_add(0, 1700000000000 + i, m)\n"
      "  else redis.call('ZADD', P..'big', 1700000000000 + i, m) end\n"
      "end";
  const int64_t m0 = used();
  Run(add, "cq:{bz:mem}:", {std::to_string(kN), "buckets"});
  const int64_t m1 = used();
  Run(add, "cq:{bz:mem}:", {std::to_string(kN), "big"});
  const int64_t m2 = used();
  const int64_t bucketed = (m1 - m0) / kN, big = (m2 - m1) / kN;
  EXPECT_LT(bucketed, 70);
  EXPECT_LT(bucketed * 2, big) << bucketed << " bytes against " << big;
  Run("local P = KEYS[1]\n"
      "redis.call('DEL', P..'big', P..'qi0', P..'qn', P..'qid')\n"
      "for i = 1, 1000 do redis.call('DEL', P..'q0:'..i) end",
      "cq:{bz:mem}:", {});
}

}  // namespace
}  // namespace chronoq::redis
