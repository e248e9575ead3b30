// Channel lifecycle: unused channels are freed after channel_linger_ms, with
// their image, so topics can be created again; REGISTER's per-connection quota.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "broker/payloads.h"
#include "broker/recording_outlet.h"
#include "broker/router.h"

namespace tw::broker {
namespace {

constexpr uint64_t kMs = 1'000'000;

class LifecycleTest : public ::testing::Test {
 protected:
  LifecycleTest() {
    RouterLimits limits;
    limits.max_channels = 3;
    limits.channel_linger_ms = 100;
    router = std::make_unique<Router>(limits, fanout, [this] { return now; });
  }
  void advance(uint64_t ms) {
    now += ms * kMs;
    router->on_tick();
  }
  Outcome register_topic(Outlet& outlet, const std::string& topic, bool may_create = true) {
    cache::ChannelId id = 0;
    Advertiser by{&outlet, may_create};
    return router->advertise(topic, wire::PayloadKind::FieldList, id, &by);
  }

  uint64_t now = 1'000 * kMs;
  Fanout fanout{1 << 20};
  std::unique_ptr<Router> router;
  RecordingOutlet hog{fanout, "hog"}, pub{fanout, "pub"}, sub{fanout, "sub"};
};

TEST_F(LifecycleTest, ChannelsLeftBehindAreFreedAfterTheLingerAndTopicsCanBeCreatedAgain) {
  for (const char* t : {"H/1", "H/2", "H/3"}) ASSERT_TRUE(register_topic(hog, t).ok());
  EXPECT_EQ(register_topic(pub, "P/1").code, wire::Code::TooManyChannels);
  advance(1'000);
  EXPECT_EQ(router->channel_count(), 3u);  // held by their publisher
  router->remove_outlet(&hog);
  advance(50);
  EXPECT_EQ(router->channel_count(), 3u);  // still lingering
  advance(60);
  EXPECT_EQ(router->channel_count(), 0u);
  EXPECT_EQ(router->stats().channels_freed, 3u);
  ASSERT_TRUE(register_topic(pub, "P/1").ok());
  ASSERT_TRUE(register_topic(pub, "H/1").ok());  // a freed topic can be created again, without its old image
  cache::ChannelId id = 0;
  ASSERT_TRUE(router->advertise("H/1", wire::PayloadKind::FieldList, id).ok());
  EXPECT_FALSE(router->channel(id)->has_data());
}

TEST_F(LifecycleTest, SubscribersKeepAChannelWildcardsIncluded) {
  cache::ChannelId id = 0;
  Advertiser by{&pub};
  ASSERT_TRUE(router->advertise("P/1", wire::PayloadKind::FieldList, id, &by).ok());
  ASSERT_TRUE(router->publish(id, int_field(30, 7), false).ok());
  ASSERT_TRUE(router->subscribe(&sub, "P/>").ok());
  router->remove_outlet(&pub);
  advance(1'000);
  ASSERT_EQ(router->channel_count(), 1u);
  EXPECT_TRUE(router->channel(id)->has_data());
  ASSERT_TRUE(router->unsubscribe(&sub, "P/>").ok());
  advance(99);
  EXPECT_EQ(router->channel_count(), 1u);
  advance(2);
  EXPECT_EQ(router->channel_count(), 0u);
  EXPECT_EQ(router->channel(id), nullptr);
  // A new channel of the topic gets a new id: a connection's ids stay valid for its life.
  cache::ChannelId again = 0;
  ASSERT_TRUE(router->advertise("P/1", wire::PayloadKind::FieldList, again).ok());
  EXPECT_NE(again, id);
}

TEST_F(LifecycleTest, AChannelUsedAgainDuringItsLingerIsKept) {
  ASSERT_TRUE(register_topic(pub, "P/1").ok());
  router->remove_outlet(&pub);
  advance(50);
  ASSERT_TRUE(router->subscribe(&sub, "P/1").ok());
  advance(200);
  EXPECT_EQ(router->channel_count(), 1u);
  EXPECT_EQ(router->stats().channels_freed, 0u);
}

TEST_F(LifecycleTest, TheQuotaRefusesNewTopicsButNotExistingOnes) {
  ASSERT_TRUE(register_topic(pub, "P/1").ok());
  EXPECT_EQ(register_topic(hog, "H/1", false).code, wire::Code::ChannelQuota);
  EXPECT_TRUE(register_topic(hog, "P/1", false).ok());
  Advertiser by{&pub};
  cache::ChannelId id = 0;
  ASSERT_TRUE(router->advertise("P/2", wire::PayloadKind::FieldList, id, &by).ok());
  EXPECT_TRUE(by.created);
  Advertiser again{&pub};
  ASSERT_TRUE(router->advertise("P/2", wire::PayloadKind::FieldList, id, &again).ok());
  EXPECT_FALSE(again.created);
}

}  // namespace
}  // namespace tw::broker
