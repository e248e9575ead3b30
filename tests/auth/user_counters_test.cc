#include "auth/user_counters.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace tw::auth {
namespace {

TEST(UserCounters, OneCountPerUserSharedByItsConnections) {
  UserCounters counters;
  auto a1 = counters.of("alice");
  auto a2 = counters.of("alice");
  auto b = counters.of("bob");
  EXPECT_EQ(a1, a2);
  EXPECT_NE(a1, b);
  EXPECT_NE(counters.of(""), b);  // anonymous connections are one user of their own
}

TEST(UserCounters, AUserWithNoConnectionLeftStartsAgainFromZero) {
  UserCounters counters;
  {
    auto a = counters.of("alice");
    a->store(7);
  }
  for (int i = 0; i < 100; ++i) counters.of("user" + std::to_string(i));  // sweeps forgotten entries
  EXPECT_EQ(counters.of("alice")->load(), 0u);
}

TEST(TakeBelow, NeverPassesTheLimitWhateverTheThreads) {
  std::atomic<uint32_t> counter{0};
  std::atomic<uint32_t> taken{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) taken += take_below(counter, 1500);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(taken.load(), 1500u);
  EXPECT_EQ(counter.load(), 1500u);
  EXPECT_FALSE(take_below(counter, 1500));
}

}  // namespace
}  // namespace tw::auth
