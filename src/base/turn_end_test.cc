#include "base/turn_end.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace chronoq::base {
namespace {

// The test thread plays a loop whose posted work runs when the test says the turn ends.
class TurnEndTest : public ::testing::Test {
 protected:
  TurnEndTest() {
    SetTurnEndPoster([this](UniqueFunction<void()> fn) { posted_.push_back(std::move(fn)); });
  }
  ~TurnEndTest() override { SetTurnEndPoster(nullptr); }
  void EndTurn() {
    std::vector<UniqueFunction<void()>> now;
    now.swap(posted_);
    for (auto& fn : now) fn();
  }
  std::vector<UniqueFunction<void()>> posted_;
};

TEST_F(TurnEndTest, WorkRunsOnceAtTheTurnsEndInOrderWithOnePostPerTurn) {
  std::vector<std::string> ran;
  RunAtTurnEnd([&] { ran.push_back("a"); });
  RunAtTurnEnd([&] { ran.push_back("b"); });
  EXPECT_EQ(posted_.size(), 1u);
  TurnSafePoint();  // nobody asked for sooner
  EXPECT_TRUE(ran.empty());
  EndTurn();
  EXPECT_EQ(ran, (std::vector<std::string>{"a", "b"}));
  RunAtTurnEnd([&] { ran.push_back("c"); });  // the next turn posts again
  EXPECT_EQ(posted_.size(), 1u);
  EndTurn();
  EXPECT_EQ(ran, (std::vector<std::string>{"a", "b", "c"}));
}

TEST_F(TurnEndTest, EndTurnSoonRunsTheWorkAtTheNextSafePoint) {
  int ran = 0;
  RunAtTurnEnd([&] { ++ran; });
  EndTurnSoon();
  TurnSafePoint();
  EXPECT_EQ(ran, 1);
  TurnSafePoint();  // asked once: nothing more
  EndTurn();        // the posted end of turn finds nothing left
  EXPECT_EQ(ran, 1);
}

TEST_F(TurnEndTest, AThreadWithoutALoopHasNoTurnEnd) {
  EXPECT_TRUE(HasTurnEnd());
  bool other = true;
  std::thread([&] { other = HasTurnEnd(); }).join();
  EXPECT_FALSE(other);
}

}  // namespace
}  // namespace chronoq::base
