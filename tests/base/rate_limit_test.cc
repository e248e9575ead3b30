// RateLimit: a log site's token bucket, driven with chosen clock values.
#include "base/rate_limit.h"

#include <gtest/gtest.h>

namespace tw::log {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;

TEST(RateLimit, AllowsABurstThenOneLinePerInterval) {
  RateLimit limit(3, kSecond);
  uint64_t suppressed = 0;
  const uint64_t t0 = 5 * kSecond;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limit.allow(t0, suppressed));
  EXPECT_FALSE(limit.allow(t0, suppressed));
  EXPECT_FALSE(limit.allow(t0 + kSecond / 2, suppressed));
  EXPECT_TRUE(limit.allow(t0 + kSecond, suppressed)) << "one token earned per interval";
  EXPECT_FALSE(limit.allow(t0 + kSecond, suppressed));
}

TEST(RateLimit, TheNextLineAllowedSaysHowManyWereLeftOut) {
  RateLimit limit(1, kSecond);
  uint64_t suppressed = 99;
  EXPECT_TRUE(limit.allow(kSecond, suppressed));
  EXPECT_EQ(suppressed, 0u);
  for (int i = 0; i < 7; ++i) EXPECT_FALSE(limit.allow(kSecond + i, suppressed));
  EXPECT_TRUE(limit.allow(2 * kSecond, suppressed));
  EXPECT_EQ(suppressed, 7u);
  EXPECT_TRUE(limit.allow(3 * kSecond, suppressed));
  EXPECT_EQ(suppressed, 0u) << "the count starts again after it is reported";
}

TEST(RateLimit, ALongPauseRefillsOnlyUpToTheBurst) {
  RateLimit limit(2, kSecond);
  uint64_t suppressed = 0;
  EXPECT_TRUE(limit.allow(kSecond, suppressed));
  EXPECT_TRUE(limit.allow(kSecond, suppressed));
  const uint64_t later = 1000 * kSecond;
  EXPECT_TRUE(limit.allow(later, suppressed));
  EXPECT_TRUE(limit.allow(later, suppressed));
  EXPECT_FALSE(limit.allow(later, suppressed)) << "a quiet hour does not buy a thousand lines";
}

}  // namespace
}  // namespace tw::log
