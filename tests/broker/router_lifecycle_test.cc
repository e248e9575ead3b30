// Channel lifecycle: unused channels without a value are freed after
// channel_linger_ms, so topics can be created again; those with a last value
// are kept, and evicted oldest first only near max_channels; REGISTER's
// per-connection quota.
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
  output::Fanout fanout{1 << 20};
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
  ASSERT_TRUE(router->advertise("P/1", wire::PayloadKind::FieldList, id, &by).ok());  // no value: not kept
  ASSERT_TRUE(router->subscribe(&sub, "P/>").ok());
  router->remove_outlet(&pub);
  advance(1'000);
  ASSERT_EQ(router->channel_count(), 1u);
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

// The publisher of `topic` publishes one value and leaves; its channel stays with it.
cache::ChannelId publish_and_leave(Router& router, RecordingOutlet& outlet, const std::string& topic, int64_t value) {
  cache::ChannelId id = 0;
  Advertiser by{&outlet};
  EXPECT_TRUE(router.advertise(topic, wire::PayloadKind::FieldList, id, &by).ok());
  EXPECT_TRUE(router.publish(id, int_field(30, value), true).ok());
  router.remove_outlet(&outlet);
  return id;
}

TEST_F(LifecycleTest, ALastValueOutlivesItsPublisher) {
  const cache::ChannelId id = publish_and_leave(*router, pub, "P/1", 7);
  advance(60'000);
  ASSERT_EQ(router->channel_count(), 1u);
  ASSERT_NE(router->channel(id), nullptr);
  EXPECT_TRUE(router->channel(id)->has_data());
  EXPECT_EQ(router->stats().channels_freed, 0u);
  // A later subscriber gets it.
  ASSERT_TRUE(router->subscribe(&sub, "P/1").ok());
  EXPECT_EQ(sub.count("image"), 1u);
}

// MQTT keeps only retained messages: a value an MQTT PUBLISH with RETAIN 0
// left is the channel's last while it is used, and goes with the channel.
TEST_F(LifecycleTest, ATransientLastValueIsNotKept) {
  cache::ChannelId id = 0;
  Advertiser by{&pub};
  ASSERT_TRUE(router->advertise("M/1", wire::PayloadKind::Opaque, id, &by).ok());
  MessageOrigin transient;
  transient.transient = true;
  const uint8_t byte = 1;
  ASSERT_TRUE(router->publish(id, {&byte, 1}, true, fields::Checked::No, transient).ok());
  router->remove_outlet(&pub);
  advance(200);
  EXPECT_EQ(router->channel(id), nullptr);
  EXPECT_EQ(router->stats().channels_freed, 1u);
}

// ... unless a retained message is set aside behind that value: MQTT's
// retained messages outlive their publisher (docs/mqtt.md, "Retained messages").
TEST_F(LifecycleTest, ATransientValueAfterARetainedOneIsKept) {
  cache::ChannelId id = 0;
  Advertiser by{&pub};
  ASSERT_TRUE(router->advertise("M/2", wire::PayloadKind::Opaque, id, &by).ok());
  MessageOrigin retained, transient;
  retained.retain = true;
  transient.transient = true;
  const uint8_t kept = 1, last = 2;
  ASSERT_TRUE(router->publish(id, {&kept, 1}, true, fields::Checked::No, retained).ok());
  ASSERT_TRUE(router->publish(id, {&last, 1}, true, fields::Checked::No, transient).ok());
  router->remove_outlet(&pub);
  advance(200);
  ASSERT_NE(router->channel(id), nullptr);
  EXPECT_EQ(router->channel(id)->retained_opaque().size(), 1u);
  EXPECT_EQ(router->channel(id)->retained_opaque()[0], kept);
}

// Unheld channels (what REST publishes) linger like any other: kept with a
// value, freed without one (they used to stay for ever).
TEST_F(LifecycleTest, UnheldChannelsAreKeptWithAValueAndFreedWithout) {
  cache::ChannelId valued = 0, empty = 0;
  ASSERT_TRUE(router->advertise("R/1", wire::PayloadKind::FieldList, valued).ok());
  ASSERT_TRUE(router->publish(valued, int_field(30, 1), true).ok());
  ASSERT_TRUE(router->advertise("R/2", wire::PayloadKind::FieldList, empty).ok());
  advance(200);
  EXPECT_NE(router->channel(valued), nullptr);
  EXPECT_EQ(router->channel(empty), nullptr);
  EXPECT_EQ(router->stats().channels_freed, 1u);
}

// max_channels = 3, headroom 1: with three kept values the tick evicts the
// oldest; a new channel at a full table evicts one at once. Never a channel
// in use, whatever its age.
TEST_F(LifecycleTest, NearTheLimitTheOldestKeptValuesAreEvicted) {
  RecordingOutlet a{fanout, "a"}, b{fanout, "b"}, c{fanout, "c"};
  const cache::ChannelId k1 = publish_and_leave(*router, a, "K/1", 1);
  advance(200);
  const cache::ChannelId k2 = publish_and_leave(*router, b, "K/2", 2);
  advance(200);
  ASSERT_TRUE(router->subscribe(&sub, "K/1").ok());  // in use again: not evictable
  ASSERT_EQ(router->channel_count(), 2u);
  const cache::ChannelId k3 = publish_and_leave(*router, c, "K/3", 3);
  advance(200);
  EXPECT_NE(router->channel(k1), nullptr) << "subscribed: in use";
  EXPECT_EQ(router->channel(k2), nullptr) << "the oldest unused kept value";
  EXPECT_NE(router->channel(k3), nullptr);
  EXPECT_EQ(router->stats().channels_evicted, 1u);
  ASSERT_TRUE(register_topic(pub, "N/1").ok());  // room left: nothing evicted
  EXPECT_NE(router->channel(k3), nullptr);
  ASSERT_TRUE(register_topic(pub, "N/2").ok());  // a full table: the creation itself makes room
  EXPECT_EQ(router->channel(k3), nullptr);
  EXPECT_EQ(router->stats().channels_evicted, 2u);
  EXPECT_NE(router->channel(k1), nullptr);
  EXPECT_EQ(register_topic(pub, "N/3").code, wire::Code::TooManyChannels) << "nothing left that may go";
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
