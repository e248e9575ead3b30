// The parts a Session is made of, each alone: its partial input, its place
// in the loop's ticks and its usage counts.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "session/connection_usage.h"
#include "session/partial_input.h"
#include "session/tick_schedule.h"

namespace tw::session {
namespace {

std::vector<uint8_t> bytes(std::initializer_list<uint8_t> b) { return b; }

TEST(PartialInput, HoldsNothingUntilSomethingIsLeftOver) {
  PartialInput in;
  const auto read = bytes({1, 2, 3});
  in.keep({read.data() + 3, 0}, true, 100);
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(in.capacity(), 0u);
  EXPECT_EQ(in.frame_started_ns(), 0u);
}

TEST(PartialInput, KeepsTheRestAndWhenItsFrameBegan) {
  PartialInput in;
  const auto read = bytes({1, 2, 3, 4, 5});
  in.keep({read.data() + 3, 2}, /*frame_completed=*/true, 100);
  ASSERT_EQ(in.bytes().size(), 2u);
  EXPECT_EQ(in.bytes()[0], 4);
  EXPECT_EQ(in.frame_started_ns(), 100u);
  // More of the same frame: its start stays.
  const auto more = bytes({6});
  in.append(more);
  in.keep(in.bytes(), /*frame_completed=*/false, 200);
  EXPECT_EQ(in.bytes().size(), 3u);
  EXPECT_EQ(in.frame_started_ns(), 100u);
  // A frame ended and another began: its deadline starts again.
  in.keep(in.bytes().subspan(1), /*frame_completed=*/true, 300);
  ASSERT_EQ(in.bytes().size(), 2u);
  EXPECT_EQ(in.bytes()[0], 5);
  EXPECT_EQ(in.bytes()[1], 6);
  EXPECT_EQ(in.frame_started_ns(), 300u);
}

TEST(PartialInput, GrowsByWhatArrivesAndIsFreedOnRelease) {
  PartialInput in;
  std::vector<uint8_t> big(10'000, 7);
  in.append(big);
  EXPECT_EQ(in.bytes().size(), big.size());
  EXPECT_GE(in.capacity(), big.size());
  EXPECT_LT(in.capacity(), 2 * big.size());
  in.release();
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(in.capacity(), 0u);
  EXPECT_EQ(in.frame_started_ns(), 0u);
}

TEST(TickSchedule, VisitsOnlyTheDueAndKeepsEachOwnersTimeWhenAnotherLeaves) {
  TickScheduleOf<int> schedule;
  int a = 1, b = 2, c = 3;
  auto ea = std::make_unique<TickScheduleOf<int>::Entry>(schedule, a);
  TickScheduleOf<int>::Entry eb(schedule, b);
  TickScheduleOf<int>::Entry ec(schedule, c);
  ea->set_due_ns(50);
  eb.set_due_ns(500);
  ec.set_due_ns(5'000);
  std::vector<int> seen;
  schedule.visit_due(600, [&](int& owner) { seen.push_back(owner); });
  EXPECT_EQ(seen, (std::vector<int>{1, 2}));
  ea.reset();  // the last entry takes the free place, with its time
  EXPECT_EQ(schedule.size(), 2u);
  EXPECT_EQ(ec.due_ns(), 5'000u);
  EXPECT_EQ(eb.due_ns(), 500u);
  ec.wake();
  seen.clear();
  schedule.visit_due(100, [&](int& owner) { seen.push_back(owner); });
  EXPECT_EQ(seen, (std::vector<int>{3}));
}

TEST(ConnectionUsage, TakeHandsOutWhatGrewSinceTheLastTake) {
  ConnectionUsage usage;
  usage.logged_in();
  usage.subscribed();
  usage.offered(true);
  usage.offered(false);
  usage.written(100);
  usage.read(40);
  usage.parsed(2);
  auth::Usage first = usage.take();
  EXPECT_EQ(first.logins, 1u);
  EXPECT_EQ(first.subscriptions, 1u);
  EXPECT_EQ(first.channels, 1u);
  EXPECT_EQ(first.messages, 2u);
  EXPECT_EQ(first.bytes, 100u);
  usage.offered(false);
  auth::Usage second = usage.take();
  EXPECT_EQ(second.messages, 1u);
  EXPECT_EQ(second.logins, 0u);
  EXPECT_TRUE(usage.take().empty());
  // The admin view's counts are since the connection opened.
  ConnectionUsage::Traffic t = usage.traffic();
  EXPECT_EQ(t.frames_in, 2u);
  EXPECT_EQ(t.bytes_in, 40u);
  EXPECT_EQ(t.messages_out, 3u);
  EXPECT_EQ(t.bytes_out, 100u);
}

}  // namespace
}  // namespace tw::session
