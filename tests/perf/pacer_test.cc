#include "perf/pacer.h"

#include <gtest/gtest.h>

namespace tw::perf {
namespace {

TEST(Pacer, ScheduleIsStartPlusIndexOverRate) {
  Pacer p(1000, 5'000'000);
  EXPECT_TRUE(p.paced());
  EXPECT_EQ(p.due_ns(0), 5'000'000u);
  EXPECT_EQ(p.due_ns(1), 6'000'000u);
  EXPECT_EQ(p.due_ns(1000), 1'005'000'000u);
}

TEST(Pacer, NonIntegerIntervalsDoNotDrift) {
  Pacer p(3, 0);  // 333,333,333.3 ns apart
  EXPECT_EQ(p.due_ns(3), 1'000'000'000u);
  EXPECT_EQ(p.due_ns(3000), 1'000'000'000'000u);
}

TEST(Pacer, DueCountCountsMessagesWhoseTimeHasCome) {
  Pacer p(1000, 1'000'000);
  EXPECT_EQ(p.due_count(0), 0u);
  EXPECT_EQ(p.due_count(1'000'000), 1u);   // message 0 is due at start
  EXPECT_EQ(p.due_count(1'999'999), 1u);
  EXPECT_EQ(p.due_count(2'000'000), 2u);
  EXPECT_EQ(p.due_count(1'001'000'000), 1001u);
}

TEST(Pacer, SaturatedWhenMoreThanTenPercentBehind) {
  Pacer p(1000, 0);
  uint64_t end = 1'000'000'000;  // 1001 messages due (0 .. 1000)
  EXPECT_FALSE(p.saturated(1001, end));
  EXPECT_FALSE(p.saturated(901, end));
  EXPECT_TRUE(p.saturated(900, end));
}

TEST(Pacer, LatenessIsMeasuredFromTheIntendedTime) {
  Pacer p(1000, 0);
  p.note_sent(0, 0);
  p.note_sent(1, 1'500'000);  // due at 1 ms, left at 1.5 ms
  p.note_sent(2, 1'900'000);  // early: no lateness
  EXPECT_EQ(p.max_lateness_ns(), 500'000u);
}

TEST(Pacer, RateZeroIsUnpaced) {
  Pacer p(0, 123);
  EXPECT_FALSE(p.paced());
  EXPECT_EQ(p.due_ns(1'000'000), 123u);
  EXPECT_FALSE(p.saturated(0, 10'000'000'000ull));
}

TEST(Pacer, WaitUntilHandsLongWaitsToIdleAndReturnsAfterTheTarget) {
  uint64_t target = clock_now_ns(ClockKind::Monotonic) + 3'000'000;
  int idle_calls = 0;
  wait_until(target, ClockKind::Monotonic, kSpinNs, [&](int timeout_ms) {
    ++idle_calls;
    EXPECT_GE(timeout_ms, 0);
    EXPECT_LE(timeout_ms, 3);
  });
  EXPECT_GE(clock_now_ns(ClockKind::Monotonic), target);
}

TEST(Pacer, WaitUntilWithoutSpinStillReturnsOnlyAfterTheTarget) {
  uint64_t target = clock_now_ns(ClockKind::Monotonic) + 200'000;
  int idle_calls = 0;
  wait_until(target, ClockKind::Monotonic, 0, [&](int) { ++idle_calls; });
  EXPECT_GE(clock_now_ns(ClockKind::Monotonic), target);
  EXPECT_EQ(idle_calls, 0);  // under a millisecond: nanosleep, not the caller's poll
}

}  // namespace
}  // namespace tw::perf
