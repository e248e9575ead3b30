// Subscriptions: exact and wildcard matching, unsubscribe, overlapping
// patterns, per-channel order, opaque payloads.
#include <gtest/gtest.h>

#include <set>

#include "integration/it_support.h"
#include "testlib/fields.h"

namespace tw::it {
namespace {

using testing::collect_until;
using wire::PayloadKind;

const std::vector<std::string> kTopics = {"A", "A/B", "A/B/C", "A/X/C", "A/B/D", "A/B/C/D", "Z/B/C"};
constexpr uint32_t kFenceId = 100;  // the fence's publish ids: 100, 101, ... (one per gateway)

// A broker with one publisher that registered every topic of kTopics
// (publish ids 1..n) and the fence topics.
class PubSub : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(broker.ready()) << broker.err();
    std::string why;
    ASSERT_TRUE(open_client(pub, broker.port(), "pub", &why)) << why;
    for (size_t i = 0; i < kTopics.size(); ++i) {
      ASSERT_TRUE(pub.register_topic(static_cast<uint32_t>(i + 1), PayloadKind::FieldList, kTopics[i]));
    }
    ASSERT_TRUE(fence.register_on(pub));
  }
  // A subscriber with `patterns` and the fence subscription, all acknowledged
  // OK: an OK ACK means the broker holds the subscription, so all that `pub`
  // publishes from now on is streamed to it (docs/protocol.md, "Subscribing").
  void open_subscriber(RawClient& sub, const std::vector<std::string>& patterns) {
    std::string why;
    ASSERT_TRUE(open_client(sub, broker.port(), "sub", &why)) << why;
    uint32_t req = 1;
    for (const std::string& p : patterns) {
      auto ack = sub.subscribe(req++, p);
      ASSERT_TRUE(ack) << p;
      ASSERT_EQ(ack->code, wire::Code::Ok) << p << ": " << ack->text;
    }
    ASSERT_TRUE(fence.subscribe(sub, req));
  }
  void publish_all_topics(int64_t value) {
    for (size_t i = 0; i < kTopics.size(); ++i) {
      ASSERT_TRUE(pub.publish(static_cast<uint32_t>(i + 1), int_payload(value)));
    }
  }
  std::set<std::string> topics_seen(const StreamModel& model) const {
    std::set<std::string> seen;
    for (const auto& [topic, ch] : model.channels()) {
      if (!fence.covers(topic) && ch.messages() > 0) seen.insert(topic);
    }
    return seen;
  }

  BrokerProcess broker;
  RawClient pub;
  const Fence fence{"FENCE", kFenceId};
};

TEST_F(PubSub, EachPatternReceivesExactlyTheMatchingTopics) {
  const std::vector<std::pair<std::string, std::set<std::string>>> cases = {
      {"A/B/C", {"A/B/C"}},
      {"A", {"A"}},
      {"A/*/C", {"A/B/C", "A/X/C"}},
      {"A/*", {"A/B"}},
      {"A/>", {"A/B", "A/B/C", "A/X/C", "A/B/D", "A/B/C/D"}},
      {"A/B/>", {"A/B/C", "A/B/D", "A/B/C/D"}},
      {"*/B/C", {"A/B/C", "Z/B/C"}},
      {"*", {"A"}},
      {">", {"A", "A/B", "A/B/C", "A/X/C", "A/B/D", "A/B/C/D", "Z/B/C"}},
      {"NOPE/>", {}},
  };
  std::vector<RawClient> subs(cases.size());
  std::vector<StreamModel> models(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) ASSERT_NO_FATAL_FAILURE(open_subscriber(subs[i], {cases[i].first}));
  publish_all_topics(1);
  publish_all_topics(2);
  for (size_t i = 0; i < cases.size(); ++i) {
    StreamModel& model = models[i];
    ASSERT_TRUE(fence.pass(pub, subs[i], model)) << cases[i].first;
    EXPECT_EQ(topics_seen(model), cases[i].second) << "pattern " << cases[i].first;
    for (const auto& topic : cases[i].second) EXPECT_EQ(model.messages_on(topic), 2u) << topic;
    EXPECT_TRUE(model.errors().empty()) << model.errors().front();
  }
}

TEST_F(PubSub, UnsubscribeStopsDelivery) {
  RawClient sub;
  StreamModel model;
  ASSERT_NO_FATAL_FAILURE(open_subscriber(sub, {"A/B/C", "A/*"}));
  publish_all_topics(1);
  ASSERT_TRUE(fence.pass(pub, sub, model));
  EXPECT_EQ(topics_seen(model), (std::set<std::string>{"A/B/C", "A/B"}));

  auto ack = sub.unsubscribe(50, "A/B/C");
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->code, wire::Code::Ok);
  publish_all_topics(2);
  ASSERT_TRUE(fence.pass(pub, sub, model));
  EXPECT_EQ(model.messages_on("A/B/C"), 1u) << "delivered after UNSUBSCRIBE";
  EXPECT_EQ(model.messages_on("A/B"), 2u) << "the other subscription must keep delivering";
  EXPECT_TRUE(model.errors().empty()) << model.errors().front();
}

TEST_F(PubSub, UnsubscribeUnknownPatternIsNotSubscribed) {
  RawClient sub;
  StreamModel model;
  ASSERT_NO_FATAL_FAILURE(open_subscriber(sub, {"A/B"}));
  auto ack = sub.unsubscribe(7, "A/B/C");
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->request_id, 7u);
  EXPECT_EQ(ack->code, wire::Code::NotSubscribed);
  // The connection stays usable.
  publish_all_topics(1);
  ASSERT_TRUE(fence.pass(pub, sub, model));
  EXPECT_EQ(model.messages_on("A/B"), 1u);
}

TEST_F(PubSub, InvalidPatternIsRefusedAndTheConnectionKept) {
  RawClient sub;
  StreamModel model;
  ASSERT_NO_FATAL_FAILURE(open_subscriber(sub, {}));
  for (const char* bad : {"A/>/B", "A/b*", "A//B", "", "A/>x"}) {
    auto ack = sub.subscribe(9, bad);
    ASSERT_TRUE(ack) << bad;
    EXPECT_EQ(ack->code, wire::Code::InvalidTopic) << "pattern '" << bad << "'";
  }
  auto ok = sub.subscribe(10, "A/B");
  ASSERT_TRUE(ok && ok->code == wire::Code::Ok);
  publish_all_topics(1);
  ASSERT_TRUE(fence.pass(pub, sub, model));
  EXPECT_EQ(topics_seen(model), (std::set<std::string>{"A/B"}));
}

TEST_F(PubSub, OverlappingSubscriptionsDeliverEachMessageOnce) {
  RawClient sub;
  StreamModel model;
  ASSERT_NO_FATAL_FAILURE(open_subscriber(sub, {"A/>", "A/B", "A/*", ">"}));
  std::vector<OwnedFrame> frames;
  constexpr int kMessages = 50;
  for (int i = 1; i <= kMessages; ++i) ASSERT_TRUE(pub.publish(2, int_payload(i)));  // topic A/B
  ASSERT_TRUE(fence.pass(pub, sub, model));
  const auto* ch = model.find("A/B");
  ASSERT_NE(ch, nullptr);
  EXPECT_EQ(ch->images, 1u);
  EXPECT_EQ(ch->updates, kMessages - 1u);
  EXPECT_EQ(ch->seq, static_cast<uint64_t>(kMessages));
  EXPECT_EQ(testing::int_field(ch->image, 1), kMessages);
  EXPECT_TRUE(model.errors().empty()) << model.errors().front();  // duplicates break the seq chain

  // Dropping one of the overlapping patterns keeps the others delivering, still once.
  auto ack = sub.unsubscribe(60, "A/>");
  ASSERT_TRUE(ack && ack->code == wire::Code::Ok);
  ASSERT_TRUE(pub.publish(2, int_payload(kMessages + 1)));
  ASSERT_TRUE(fence.pass(pub, sub, model));
  EXPECT_EQ(model.find("A/B")->messages(), kMessages + 1u);
  EXPECT_TRUE(model.errors().empty()) << model.errors().front();
}

TEST_F(PubSub, EachChannelIsInOrderWithSeqStepsOfOne) {
  RawClient sub;
  StreamModel model;
  ASSERT_NO_FATAL_FAILURE(open_subscriber(sub, {"A/>"}));
  constexpr int kRounds = 500;
  std::vector<uint8_t> batch;
  for (int i = 1; i <= kRounds; ++i) {
    for (uint32_t id : {2u, 3u, 4u}) {  // A/B, A/B/C, A/X/C interleaved
      auto payload = testing::field_list({{1, int64_t{i}}, {2, std::string("round ") + std::to_string(i)}});
      testing::append_frame(batch, wire::kPublishFixedSize + payload.size(), [&](std::span<uint8_t> out) {
        return wire::encode(out, wire::Publish{id, false, payload});
      });
    }
  }
  ASSERT_TRUE(pub.send_raw(batch));
  ASSERT_TRUE(fence.pass(pub, sub, model));
  for (const char* topic : {"A/B", "A/B/C", "A/X/C"}) {
    const auto* ch = model.find(topic);
    ASSERT_NE(ch, nullptr) << topic;
    EXPECT_EQ(ch->first_seq, 1u) << topic;
    EXPECT_EQ(ch->seq, static_cast<uint64_t>(kRounds)) << topic;
    EXPECT_EQ(ch->messages(), static_cast<uint64_t>(kRounds)) << topic;
    EXPECT_EQ(testing::int_field(ch->image, 1), kRounds) << topic;
    EXPECT_EQ(testing::string_field(ch->image, 2), "round " + std::to_string(kRounds)) << topic;
  }
  EXPECT_TRUE(model.errors().empty()) << model.errors().front();
}

TEST_F(PubSub, OpaqueChannelsCarryPayloadBytesUnchanged) {
  constexpr uint32_t kOpaqueId = 30;
  ASSERT_TRUE(pub.register_topic(kOpaqueId, PayloadKind::Opaque, "BLOB/1"));
  RawClient sub;
  StreamModel model;
  ASSERT_NO_FATAL_FAILURE(open_subscriber(sub, {"BLOB/>"}));
  // Not field lists: an opaque channel must not parse or merge them.
  std::vector<std::vector<uint8_t>> payloads = {{0xFF, 0xFF, 0x01}, {}, {'h', 'e', 'l', 'l', 'o'}, std::vector<uint8_t>(3000, 0xAB)};
  for (size_t i = 0; i < payloads.size(); ++i) {
    ASSERT_TRUE(pub.publish(kOpaqueId, payloads[i]));
    ASSERT_TRUE(fence.pass(pub, sub, model));
    const auto* ch = model.find("BLOB/1");
    ASSERT_NE(ch, nullptr);
    EXPECT_EQ(ch->kind, PayloadKind::Opaque);
    EXPECT_EQ(ch->seq, i + 1);
    EXPECT_EQ(ch->last_payload, payloads[i]) << "message " << i;
  }
  EXPECT_TRUE(model.errors().empty()) << model.errors().front();
}

}  // namespace
}  // namespace tw::it
