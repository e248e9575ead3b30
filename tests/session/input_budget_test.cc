// InputBudget: the bytes a loop's sessions hold in partial frames, and who
// gives them up when the total passes the limit.
#include "session/input_budget.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace tw::session {
namespace {

// A holder that records being told to give up its bytes, as a session would.
class Holder final : public InputBudget::Holder {
 public:
  explicit Holder(InputBudget& budget) : budget_(budget) {}
  ~Holder() override { budget_.set(*this, 0); }
  void hold(size_t bytes) { budget_.set(*this, bytes); }
  int gave_up = 0;

 private:
  void give_up_input() override {
    ++gave_up;
    budget_.set(*this, 0);  // what a session does when it frees its buffer: harmless, already forgotten
  }
  InputBudget& budget_;
};

TEST(InputBudget, CountsWhatEachHolderHoldsNow) {
  InputBudget budget(1000);
  Holder a(budget), b(budget);
  a.hold(100);
  b.hold(300);
  a.hold(250);  // grew: replaces, does not add
  EXPECT_EQ(budget.held(), 550u);
  EXPECT_EQ(budget.holders(), 2u);
  b.hold(0);
  EXPECT_EQ(budget.held(), 250u);
  EXPECT_EQ(budget.holders(), 1u);
  EXPECT_EQ(budget.enforce(), 0u) << "under the limit nobody gives anything up";
}

TEST(InputBudget, OverTheLimitTheLargestHoldersGiveUpUntilItFits) {
  InputBudget budget(1000);
  Holder small(budget), large(budget), middle(budget);
  small.hold(100);
  large.hold(700);
  middle.hold(400);  // 1200 in all
  EXPECT_EQ(budget.enforce(), 1u);
  EXPECT_EQ(large.gave_up, 1);
  EXPECT_EQ(middle.gave_up, 0);
  EXPECT_EQ(small.gave_up, 0);
  EXPECT_EQ(budget.held(), 500u);
  middle.hold(1500);  // alone past the limit
  EXPECT_EQ(budget.enforce(), 1u);
  EXPECT_EQ(middle.gave_up, 1);
  EXPECT_EQ(budget.held(), 100u);
  EXPECT_EQ(budget.holders(), 1u);
}

TEST(InputBudget, AHolderDestroyedIsForgotten) {
  InputBudget budget(10);
  {
    Holder gone(budget);
    gone.hold(8);
  }
  Holder kept(budget);
  kept.hold(9);
  EXPECT_EQ(budget.held(), 9u);
  EXPECT_EQ(budget.enforce(), 0u);
}

TEST(InputBudget, ManyHoldersAreEvictedLargestFirst) {
  InputBudget budget(50);
  std::vector<std::unique_ptr<Holder>> holders;
  for (size_t i = 1; i <= 10; ++i) {
    holders.push_back(std::make_unique<Holder>(budget));
    holders.back()->hold(i);  // 55 in all
  }
  EXPECT_EQ(budget.enforce(), 1u);
  EXPECT_EQ(holders[9]->gave_up, 1) << "the one holding 10";
  for (size_t i = 0; i < 9; ++i) EXPECT_EQ(holders[i]->gave_up, 0);
  EXPECT_EQ(budget.held(), 45u);
}

}  // namespace
}  // namespace tw::session
