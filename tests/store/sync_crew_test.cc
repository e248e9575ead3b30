// SyncCrew: a batch's syncs run at the same time, each exactly once, and
// run() returns only when all are done.
#include "store/sync_crew.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace tw::store {
namespace {

using Clock = std::chrono::steady_clock;

TEST(SyncCrew, EveryJobRunsOnceAndRunReturnsAfterTheLast) {
  SyncCrew crew(3);
  for (size_t count : {0u, 1u, 2u, 5u, 40u}) {
    std::vector<std::atomic<int>> calls(count);
    crew.run(count, [&](size_t i) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      calls[i].fetch_add(1);
    });
    for (size_t i = 0; i < count; ++i) EXPECT_EQ(calls[i].load(), 1) << "job " << i << " of " << count;
  }
}

// Each job waits until all have started: done one after another, the first
// would wait for ever (bounded here, so that a serial crew fails, not hangs).
TEST(SyncCrew, JobsRunAtTheSameTime) {
  SyncCrew crew(4);
  constexpr size_t kJobs = 5;
  std::atomic<size_t> started{0};
  std::atomic<size_t> met{0};
  crew.run(kJobs, [&](size_t) {
    started.fetch_add(1);
    const auto until = Clock::now() + std::chrono::seconds(10);
    while (started.load() < kJobs && Clock::now() < until) std::this_thread::yield();
    if (started.load() == kJobs) met.fetch_add(1);
  });
  EXPECT_EQ(met.load(), kJobs) << "the five jobs did not all run at once";
}

TEST(SyncCrew, WithoutHelpersTheCallerRunsEveryJobItself) {
  SyncCrew crew(0);
  const auto caller = std::this_thread::get_id();
  size_t on_caller = 0;
  crew.run(4, [&](size_t) { on_caller += std::this_thread::get_id() == caller; });
  EXPECT_EQ(on_caller, 4u);
}

}  // namespace
}  // namespace tw::store
