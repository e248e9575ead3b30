// OwnerThread in debug builds: the first user owns an unclaimed object, a
// claim hands it to another thread, and a foreign thread aborts with a
// message naming both threads. Release builds compile the check out, so
// there these tests are skipped, with the reason shown.
#include "base/owner_thread.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <thread>

namespace tw {
namespace {

#ifdef NDEBUG
constexpr bool kChecked = false;
#else
constexpr bool kChecked = true;
#endif

#define SKIP_UNLESS_CHECKED() \
  if (!kChecked) GTEST_SKIP() << "ownership checks are compiled out of release builds (NDEBUG)"

void use_on_new_thread(const OwnerThread& owner, const char* thread_name) {
  std::thread t([&] {
    pthread_setname_np(pthread_self(), thread_name);
    owner.check("Widget");
  });
  t.join();
}

TEST(OwnerThreadDeathTest, FirstUserOwnsAnUnclaimedObject) {
  SKIP_UNLESS_CHECKED();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        pthread_setname_np(pthread_self(), "tw-first");
        OwnerThread owner;
        owner.check("Widget");
        use_on_new_thread(owner, "tw-second");
      },
      "tickwire: Widget used on thread [0-9]+ 'tw-second', owned by thread [0-9]+ 'tw-first'");
}

TEST(OwnerThreadDeathTest, ClaimHandsTheObjectToAnotherThread) {
  SKIP_UNLESS_CHECKED();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        OwnerThread owner;
        owner.check("Widget");  // the test thread owns it first
        std::thread loop([&] {
          pthread_setname_np(pthread_self(), "tw-loop");
          owner.claim();
          owner.check("Widget");  // the loop owns it now: passes
        });
        loop.join();
        owner.check("Widget");  // so the test thread is the foreign one
      },
      "tickwire: Widget used on thread [0-9]+ '[^']*', owned by thread [0-9]+ 'tw-loop'");
}

}  // namespace
}  // namespace tw
