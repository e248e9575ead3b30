// The router driven step by step in process, with outlets that record what
// they are sent (decoded from the real frames the router encodes).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "output/fanout.h"
#include "broker/router.h"
#include "tickwire/fields/field_list.h"
#include "broker/recording_outlet.h"
#include "tickwire/wire/codec.h"

namespace tw::broker {
namespace {

std::vector<uint8_t> quote(int64_t bid_mantissa, int64_t size = 100) {
  std::vector<uint8_t> buf(64);
  fields::FieldListWriter w(buf);
  w.add_decimal(22, {bid_mantissa, -2});
  w.add_int(30, size);
  buf.resize(w.finish());
  return buf;
}

class RouterTest : public ::testing::Test {
 protected:
  cache::ChannelId advertise(const std::string& topic, wire::PayloadKind kind = wire::PayloadKind::FieldList) {
    cache::ChannelId id = 0;
    EXPECT_TRUE(router.advertise(topic, kind, id).ok());
    return id;
  }
  void publish(cache::ChannelId id, int64_t bid) { ASSERT_TRUE(router.publish(id, quote(bid), false).ok()); }

  output::Fanout fanout{1 << 20};
  Router router{RouterLimits{}, fanout};
  RecordingOutlet a{fanout}, b{fanout};
};

TEST_F(RouterTest, LateSubscriberGetsImageThenUpdates) {
  auto ibm = advertise("NYSE/EQ/IBM");
  publish(ibm, 100);
  publish(ibm, 101);
  ASSERT_TRUE(router.subscribe(&a, "NYSE/EQ/IBM").ok());
  publish(ibm, 102);
  ASSERT_EQ(a.events.size(), 2u);
  EXPECT_EQ(a.events[0].kind, "image");
  EXPECT_EQ(a.events[0].seq, 2u);
  EXPECT_EQ(a.events[1].kind, "update");
  EXPECT_EQ(a.events[1].seq, 3u);
}

TEST_F(RouterTest, SubscriberBeforeFirstPublishGetsImageAsFirstMessage) {
  ASSERT_TRUE(router.subscribe(&a, "NYSE/>").ok());
  auto ibm = advertise("NYSE/EQ/IBM");
  EXPECT_TRUE(a.events.empty());
  publish(ibm, 100);
  publish(ibm, 101);
  ASSERT_EQ(a.events.size(), 2u);
  EXPECT_EQ(a.events[0].kind, "image");
  EXPECT_EQ(a.events[0].seq, 1u);
  EXPECT_EQ(a.events[1].kind, "update");
  EXPECT_EQ(a.events[1].seq, 2u);
}

TEST_F(RouterTest, OverlappingPatternsDeliverOnce) {
  auto ibm = advertise("NYSE/EQ/IBM");
  for (const char* p : {"NYSE/>", "NYSE/EQ/IBM", "NYSE/*/IBM", "*/EQ/*", ">"}) ASSERT_TRUE(router.subscribe(&a, p).ok());
  publish(ibm, 1);
  publish(ibm, 2);
  ASSERT_EQ(a.events.size(), 2u);
  // Dropping all but one pattern keeps the stream; dropping the last stops it.
  for (const char* p : {"NYSE/>", "NYSE/EQ/IBM", "NYSE/*/IBM", "*/EQ/*"}) ASSERT_TRUE(router.unsubscribe(&a, p).ok());
  publish(ibm, 3);
  ASSERT_EQ(a.events.size(), 3u);
  ASSERT_TRUE(router.unsubscribe(&a, ">").ok());
  publish(ibm, 4);
  EXPECT_EQ(a.events.size(), 3u);
}

TEST_F(RouterTest, WildcardsSelectTheirChannelsOnly) {
  auto ibm = advertise("NYSE/EQ/IBM");
  auto opt = advertise("NYSE/OPT/IBM/C100");
  auto other = advertise("LSE/EQ/VOD");
  ASSERT_TRUE(router.subscribe(&a, "NYSE/*/IBM").ok());
  ASSERT_TRUE(router.subscribe(&b, "NYSE/OPT/>").ok());
  publish(ibm, 1);
  publish(opt, 1);
  publish(other, 1);
  ASSERT_EQ(a.events.size(), 1u);
  EXPECT_EQ(a.events[0].topic, "NYSE/EQ/IBM");
  ASSERT_EQ(b.events.size(), 1u);
  EXPECT_EQ(b.events[0].topic, "NYSE/OPT/IBM/C100");
}

TEST_F(RouterTest, UpdateFrameIsSharedByAllSubscribers) {
  auto ibm = advertise("NYSE/EQ/IBM");
  publish(ibm, 1);
  ASSERT_TRUE(router.subscribe(&a, "NYSE/>").ok());
  ASSERT_TRUE(router.subscribe(&b, "NYSE/>").ok());
  publish(ibm, 2);
  EXPECT_EQ(router.stats().deliveries, 2u);
  EXPECT_EQ(a.events.back().seq, b.events.back().seq);
}

TEST_F(RouterTest, MalformedPayloadIsRejectedAndCacheUnchanged) {
  auto ibm = advertise("NYSE/EQ/IBM");
  publish(ibm, 1);
  std::vector<uint8_t> bad = quote(2);
  bad.pop_back();
  EXPECT_EQ(router.publish(ibm, bad, false).code, wire::Code::BadPayload);
  EXPECT_EQ(router.channel(ibm)->seq, 1u);
  EXPECT_EQ(router.channel(ibm)->image.find(22)->i, 1);
}

TEST_F(RouterTest, ImagePublishReplacesTheCache) {
  auto ibm = advertise("NYSE/EQ/IBM");
  publish(ibm, 1);
  std::vector<uint8_t> buf(64);
  fields::FieldListWriter w(buf);
  w.add_int(31, 7);
  buf.resize(w.finish());
  ASSERT_TRUE(router.publish(ibm, buf, true).ok());
  const auto& image = router.channel(ibm)->image;
  EXPECT_EQ(image.find(22), nullptr);
  ASSERT_NE(image.find(31), nullptr);
  EXPECT_EQ(image.find(31)->i, 7);
}

TEST_F(RouterTest, SnapshotFoundAndNotFound) {
  auto ibm = advertise("NYSE/EQ/IBM");
  EXPECT_EQ(router.snapshot(&a, "NYSE/EQ/IBM", 9).code, wire::Code::NotFound);  // no data yet
  publish(ibm, 1);
  EXPECT_TRUE(router.snapshot(&a, "NYSE/EQ/IBM", 9).ok());
  EXPECT_EQ(router.snapshot(&a, "NYSE/EQ/MSFT", 10).code, wire::Code::NotFound);
  EXPECT_EQ(router.snapshot(&a, "NYSE/*", 11).code, wire::Code::InvalidTopic);
  ASSERT_EQ(a.events.size(), 1u);
  EXPECT_EQ(a.events[0].kind, "snapshot");
}

TEST_F(RouterTest, InvalidTopicsAndKindMismatch) {
  cache::ChannelId id = 0;
  EXPECT_EQ(router.advertise("NYSE//IBM", wire::PayloadKind::FieldList, id).code, wire::Code::InvalidTopic);
  EXPECT_EQ(router.advertise("NYSE/*", wire::PayloadKind::FieldList, id).code, wire::Code::InvalidTopic);
  EXPECT_EQ(router.subscribe(&a, "A/>/B").code, wire::Code::InvalidTopic);
  advertise("NYSE/EQ/IBM");
  EXPECT_EQ(router.advertise("NYSE/EQ/IBM", wire::PayloadKind::Opaque, id).code, wire::Code::KindMismatch);
}

TEST_F(RouterTest, SubscriptionLimitAndRemoval) {
  RouterLimits limits;
  limits.max_subscriptions = 2;
  Router small(limits, fanout);
  EXPECT_TRUE(small.subscribe(&a, "A/1").ok());
  EXPECT_TRUE(small.subscribe(&a, "A/2").ok());
  EXPECT_TRUE(small.subscribe(&a, "A/2").ok());  // already held: no-op
  EXPECT_EQ(small.subscribe(&a, "A/3").code, wire::Code::TooManySubscriptions);
  small.remove_outlet(&a);
  EXPECT_EQ(small.subscription_count(&a), 0u);
  EXPECT_TRUE(small.subscribe(&a, "A/3").ok());
  EXPECT_EQ(router.unsubscribe(&b, "X").code, wire::Code::NotSubscribed);
}

TEST_F(RouterTest, ChannelLimit) {
  RouterLimits limits;
  limits.max_channels = 1;
  Router small(limits, fanout);
  cache::ChannelId id = 0;
  EXPECT_TRUE(small.advertise("A/1", wire::PayloadKind::FieldList, id).ok());
  EXPECT_EQ(small.advertise("A/2", wire::PayloadKind::FieldList, id).code, wire::Code::TooManyChannels);
}


// A broker link's word on what it brings in (docs/protocol.md, STREAM_STATUS
// naming a publish id): subscribers of a broadcast channel hear STALE, then
// OK; CLOSED, and channels that are not broadcast, are refused.
TEST_F(RouterTest, APublisherMarksItsBroadcastChannelStaleThenOk) {
  auto ibm = advertise("NYSE/EQ/IBM");
  publish(ibm, 100);
  ASSERT_TRUE(router.subscribe(&a, "NYSE/>").ok());
  ASSERT_TRUE(router.publisher_status(&b, ibm, wire::ChannelState::Stale, wire::Code::ProviderLost, "link lost").ok());
  ASSERT_TRUE(router.publisher_status(&b, ibm, wire::ChannelState::Ok, wire::Code::Ok, "").ok());
  ASSERT_EQ(a.events.size(), 3u);
  EXPECT_EQ(a.events[1].kind, "status");
  EXPECT_EQ(a.events[1].state, wire::ChannelState::Stale);
  EXPECT_EQ(a.events[1].code, wire::Code::ProviderLost);
  EXPECT_EQ(a.events[2].kind, "status");
  EXPECT_EQ(a.events[2].state, wire::ChannelState::Ok);
  EXPECT_FALSE(router.publisher_status(&b, ibm, wire::ChannelState::Closed, wire::Code::Ok, "").ok());
  EXPECT_FALSE(router.publisher_status(&b, 999, wire::ChannelState::Stale, wire::Code::Ok, "").ok());
  EXPECT_EQ(a.events.size(), 3u);
}

// Each subscription a pattern gains or loses is told to the interest
// listener (a broker link counts them, tier/broker_link.h).
TEST_F(RouterTest, TheInterestListenerHearsEverySubscriptionChange) {
  std::vector<std::pair<std::string, bool>> heard;
  router.on_interest([&](std::string_view pattern, bool add) { heard.emplace_back(std::string(pattern), add); });
  ASSERT_TRUE(router.subscribe(&a, "NYSE/>").ok());
  ASSERT_TRUE(router.subscribe(&b, "NYSE/>").ok());
  ASSERT_TRUE(router.unsubscribe(&a, "NYSE/>").ok());
  const std::vector<std::pair<std::string, bool>> want = {{"NYSE/>", true}, {"NYSE/>", true}, {"NYSE/>", false}};
  EXPECT_EQ(heard, want);
}

}  // namespace
}  // namespace tw::broker
