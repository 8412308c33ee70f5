#include "base/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <utility>

#include "base/result.h"
#include "base/unique_function.h"

namespace chronoq {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), Errc::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.ToString(), "ok");
  EXPECT_EQ(s, Status::Ok());
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s = NotFound("message x not found");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Errc::kNotFound);
  EXPECT_EQ(s.message(), "message x not found");
  EXPECT_EQ(s.ToString(), "not_found: message x not found");
  EXPECT_EQ(InvalidArgument("a").code(), Errc::kInvalidArgument);
  EXPECT_EQ(InvalidState("a").code(), Errc::kInvalidState);
  EXPECT_EQ(Internal("a").code(), Errc::kInternal);
  EXPECT_EQ(IOError("a").code(), Errc::kIOError);
  EXPECT_EQ(Unavailable("a").code(), Errc::kUnavailable);
}

TEST(StatusTest, OkCodeWithMessageStaysOkAndDropsIt) {
  Status s(Errc::kOk, "ignored");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.message(), "");
}

TEST(StatusTest, ErrorWithoutMessagePrintsJustTheCode) {
  EXPECT_EQ(Status(Errc::kTimeout, "").ToString(), "timeout");
}

TEST(StatusTest, EqualityComparesCodeAndMessage) {
  EXPECT_EQ(NotFound("a"), NotFound("a"));
  EXPECT_FALSE(NotFound("a") == NotFound("b"));
  EXPECT_FALSE(NotFound("a") == Internal("a"));
  Status copy = NotFound("a");
  Status other = copy;
  EXPECT_EQ(other, copy);
}

TEST(StatusTest, EveryErrcHasADistinctName) {
  const Errc all[] = {
      Errc::kOk,           Errc::kNotFound, Errc::kAlreadyExists,     Errc::kInvalidArgument,
      Errc::kInvalidState, Errc::kConflict, Errc::kResourceExhausted, Errc::kUnavailable,
      Errc::kTimeout,      Errc::kIOError,  Errc::kCorruption,        Errc::kInternal,
      Errc::kTryLater};
  std::set<std::string_view> names;
  for (Errc e : all) {
    std::string_view n = ErrcName(e);
    EXPECT_NE(n, "unknown");
    EXPECT_TRUE(names.insert(n).second) << n;
  }
  EXPECT_EQ(ErrcName(Errc::kInvalidState), "invalid_state");
}

Status FailIfNegative(int v) {
  if (v < 0) return InvalidArgument("negative");
  return Status::Ok();
}

Status Chain(int v, int* reached) {
  CQ_RETURN_IF_ERROR(FailIfNegative(v));
  ++*reached;
  return Status::Ok();
}

TEST(StatusTest, ReturnIfErrorPropagates) {
  int reached = 0;
  EXPECT_TRUE(Chain(1, &reached).ok());
  EXPECT_EQ(reached, 1);
  Status s = Chain(-1, &reached);
  EXPECT_EQ(s.code(), Errc::kInvalidArgument);
  EXPECT_EQ(reached, 1);
}

TEST(ResultTest, HoldsAValue) {
  Result<std::string> r = std::string("abc");
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(static_cast<bool>(r));
  EXPECT_EQ(*r, "abc");
  EXPECT_EQ(r->size(), 3u);
  EXPECT_TRUE(r.error().ok());
  EXPECT_TRUE(r.status().ok());
  r.value() += "d";
  EXPECT_EQ(r.value(), "abcd");
}

TEST(ResultTest, HoldsAnError) {
  Result<int> r = NotFound("nope");
  EXPECT_FALSE(r.has_value());
  EXPECT_FALSE(static_cast<bool>(r));
  EXPECT_EQ(r.error().code(), Errc::kNotFound);
  EXPECT_EQ(r.status().message(), "nope");
}

TEST(ResultTest, MovesOutMoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  std::unique_ptr<int> p = std::move(r).value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 7);
}

TEST(ResultDeathTest, ValueOfErrorAborts) {
  Result<int> r = Internal("boom");
  EXPECT_DEATH({ (void)r.value(); }, "boom");
}

TEST(ResultDeathTest, ConstructionFromOkStatusAborts) {
  EXPECT_DEATH(
      {
        Result<int> r = Status::Ok();
        (void)r;
      },
      "OK status");
}

Result<int> Half(int v) {
  if (v % 2 != 0) return InvalidArgument("odd");
  return v / 2;
}

Result<int> Quarter(int v) {
  CQ_ASSIGN_OR_RETURN(int h, Half(v));
  CQ_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST(ResultTest, AssignOrReturnPropagates) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_EQ(Quarter(6).error().code(), Errc::kInvalidArgument);
  EXPECT_EQ(Quarter(7).error().message(), "odd");
}

TEST(UniqueFunctionTest, HoldsMoveOnlyCaptures) {
  auto p = std::make_unique<int>(41);
  UniqueFunction<int(int)> f = [p = std::move(p)](int d) { return *p + d; };
  ASSERT_TRUE(static_cast<bool>(f));
  EXPECT_EQ(f(1), 42);
  UniqueFunction<int(int)> g = std::move(f);
  EXPECT_EQ(g(2), 43);
  UniqueFunction<void()> empty;
  EXPECT_FALSE(static_cast<bool>(empty));
  UniqueFunction<void()> null = nullptr;
  EXPECT_FALSE(static_cast<bool>(null));
}

TEST(UniqueFunctionTest, DestroysCaptureWithTheFunction) {
  auto shared = std::make_shared<int>(1);
  {
    UniqueFunction<void()> f = [shared] {};
    EXPECT_EQ(shared.use_count(), 2);
  }
  EXPECT_EQ(shared.use_count(), 1);
}

// Counts its copies and moves.
struct Counted {
  Counted() = default;
  Counted(const Counted& o) : copies(o.copies + 1), moves(o.moves) {}
  Counted(Counted&& o) noexcept : copies(o.copies), moves(o.moves + 1) {}
  Counted& operator=(const Counted&) = default;
  Counted& operator=(Counted&&) = default;
  int copies = 0;
  int moves = 0;
};

// A callback's argument given as an rvalue is moved nowhere down a chain of callbacks that pass
// it on (a send's answer goes through four); an lvalue is copied once, as a by-value call would.
TEST(UniqueFunctionTest, PassesItsArgumentsOnByReference) {
  Counted seen;
  UniqueFunction<void(Counted)> last = [&seen](Counted c) { seen = std::move(c); };
  UniqueFunction<void(Counted)> middle = [&last](Counted&& c) { last(std::move(c)); };
  UniqueFunction<void(Counted)> first = [&middle](Counted&& c) { middle(std::move(c)); };
  first(Counted{});
  EXPECT_EQ(seen.copies, 0);
  EXPECT_EQ(seen.moves, 1);  // into the last lambda's by-value parameter
  Counted lvalue;
  first(lvalue);
  EXPECT_EQ(seen.copies, 1);
  EXPECT_EQ(seen.moves, 1);
  // Another type is converted once, where it binds.
  UniqueFunction<size_t(std::string)> size = [](std::string&& s) { return s.size(); };
  EXPECT_EQ(size("four"), 4u);
}

TEST(ResultTest, AValueIsMovedOnceIntoPlace) {
  Result<Counted> moved = Counted{};
  EXPECT_EQ(moved->copies, 0);
  EXPECT_EQ(moved->moves, 1);
  const Counted c;
  Result<Counted> copied = c;
  EXPECT_EQ(copied->copies, 1);
  EXPECT_EQ(copied->moves, 0);
}

}  // namespace
}  // namespace chronoq
