// A Router belongs to one loop thread: in a debug build, a public method
// called on any other thread aborts with a message naming the Router and both
// threads (base/owner_thread.h). Release builds compile the check out.
#include <gtest/gtest.h>
#include <pthread.h>

#include <thread>

#include "output/fanout.h"
#include "broker/router.h"

namespace tw::broker {
namespace {

// A loop thread claims the router and uses it; then the test thread calls it.
void use_on_loop_then_here() {
  output::Fanout fanout{1 << 16};
  Router router{RouterLimits{}, fanout};
  std::thread loop([&] {
    pthread_setname_np(pthread_self(), "tw-ap-0");
    router.claim_owner();
    cache::ChannelId id = 0;
    (void)router.advertise("NYSE/EQ/IBM", wire::PayloadKind::FieldList, id);
  });
  loop.join();
  (void)router.channel_count();  // the test thread is not the loop
}

TEST(RouterOwnerDeathTest, MethodOnAForeignThreadAborts) {
#ifdef NDEBUG
  GTEST_SKIP() << "ownership checks are compiled out of release builds (NDEBUG)";
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(use_on_loop_then_here(),
               "tickwire: Router used on thread [0-9]+ '[^']*', owned by thread [0-9]+ 'tw-ap-0'");
}

TEST(RouterOwner, TheOwningLoopUsesItFreely) {
  output::Fanout fanout{1 << 16};
  Router router{RouterLimits{}, fanout};
  EXPECT_EQ(router.channel_count(), 0u);  // set up on the test thread, which owns it until...
  size_t channels = 0;
  std::thread loop([&] {  // ...the loop claims it
    router.claim_owner();
    fanout.claim_owner();
    cache::ChannelId id = 0;
    (void)router.advertise("NYSE/EQ/IBM", wire::PayloadKind::FieldList, id);
    channels = router.channel_count();
  });
  loop.join();
  EXPECT_EQ(channels, 1u);
}

}  // namespace
}  // namespace tw::broker
