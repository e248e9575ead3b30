// A SUBSCRIBE's ACK (MQTT: SUBACK) means the broker holds the subscription
// (docs/protocol.md, "Subscribing"): a message that another connection
// publishes right after the ACK reaches the subscriber as a stream message,
// with no barrier in between. In thread tiers the subscription crosses
// threads (docs/ARCHITECTURE.md, "A subscription across the tiers"), so
// without the guarantee this races: each test runs many rounds, each on a
// fresh topic, so that every round's subscription travels to the gateways
// anew, and the subscriber's own connection first publishes a burst to
// another topic of the same gateway, so that the subscription waits in that
// gateway's ring behind it while the publisher's message, on another ring,
// need not.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "integration/it_support.h"
#include "mqtt/packets.h"
#include "testlib/blocking_socket.h"
#include "testlib/fields.h"

namespace tw::it {
namespace {

using mqtt::testing::Bytes;
using mqtt::testing::cat;
using mqtt::testing::packet;
using mqtt::testing::str;
using testing::BlockingSocket;
using wire::PayloadKind;

constexpr int kRounds = 20;
constexpr int kBurst = 15'000;  // records: more than a gateway reads from one ring per turn

class SubscribeAck : public ::testing::Test {
 protected:
  void SetUp() override {
    mqtt_port_ = testing::pick_free_port();
    BrokerOptions options;
    options.config_toml = native_and_mqtt_listeners(mqtt_port_);
    broker_ = std::make_unique<BrokerProcess>(options);
    ASSERT_TRUE(broker_->ready()) << broker_->err();
    std::string why;
    // Consecutive connections go to different access points (round-robin):
    // the subscriber's and the publisher's records reach a gateway on different rings.
    ASSERT_TRUE(open_client(sub_, broker_->port(), "sub", &why)) << why;
    ASSERT_TRUE(open_client(pub_, broker_->port(), "pub", &why)) << why;
  }

  // `sub_` publishes a burst to another topic of `topic`'s gateway (publish
  // id `publish_id`): a subscription its access point sends after it waits
  // in that gateway's ring behind whatever the gateway has not read of it.
  void burst_beside(const std::string& topic, const std::string& prefix, uint32_t publish_id);

  uint16_t mqtt_port_ = 0;
  std::unique_ptr<BrokerProcess> broker_;
  RawClient sub_;
  RawClient pub_;
};

// Reads `sub` until the message with seq 2 of the only channel still
// published on; true when it came as an UPDATE, false when it came merged
// into an IMAGE (the subscription reached the channel's owner after it) or
// never came.
bool second_message_is_an_update(RawClient& sub, std::string& seen) {
  while (auto frame = sub.next_message()) {
    seen += testing::describe(*frame) + "\n";
    if (auto update = frame->as<wire::Update>(); update && update->seq == 2) return true;
    if (auto image = frame->as<wire::Image>(); image && image->seq >= 2) return false;
  }
  return false;
}

// kBurst PUBLISHes of a 50-field list (merged into the image by the
// gateway: more work there than on the access point), as one write.
void SubscribeAck::burst_beside(const std::string& topic, const std::string& prefix, uint32_t publish_id) {
  ASSERT_TRUE(sub_.register_topic(publish_id, PayloadKind::FieldList, topic_beside(topic, prefix)));
  std::vector<testing::TestField> fields;
  for (uint16_t f = 1; f <= 50; ++f) fields.push_back({f, int64_t{f}});
  const std::vector<uint8_t> payload = testing::field_list(fields);
  std::vector<uint8_t> one(wire::kPublishFixedSize + payload.size());
  one.resize(wire::encode(one, wire::Publish{publish_id, false, payload}));
  std::vector<uint8_t> burst;
  for (int i = 0; i < kBurst; ++i) burst.insert(burst.end(), one.begin(), one.end());
  ASSERT_TRUE(sub_.send_raw(burst));
}

TEST_F(SubscribeAck, AMessagePublishedJustAfterTheAckIsStreamedAsAnUpdate) {
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // Exact topics and wildcards (which go to every gateway) in turn.
    const std::string topic = "ACK/N/" + std::to_string(round) + "/T";
    const std::string pattern = round % 2 == 0 ? topic : "ACK/N/" + std::to_string(round) + "/>";
    const auto publish_id = static_cast<uint32_t>(round + 1);
    ASSERT_TRUE(pub_.register_topic(publish_id, PayloadKind::FieldList, topic));
    ASSERT_TRUE(pub_.publish(publish_id, int_payload(1)));
    ASSERT_NO_FATAL_FAILURE(burst_beside(topic, "ACK/NB", 1000 + publish_id));
    const auto request_id = static_cast<uint32_t>(2 * round + 1);
    auto ack = sub_.subscribe(request_id, pattern);
    ASSERT_TRUE(ack);
    ASSERT_EQ(ack->code, wire::Code::Ok) << ack->text;
    ASSERT_TRUE(pub_.publish(publish_id, int_payload(2)));
    std::string seen;
    ASSERT_TRUE(second_message_is_an_update(sub_, seen)) << pattern << ", frames after the ACK:\n" << seen;
    ack = sub_.unsubscribe(request_id + 1, pattern);
    ASSERT_TRUE(ack && ack->code == wire::Code::Ok);
  }
}

// An MQTT 5 client on a blocking socket: CONNECT, then SUBSCRIBEs by hand.
Bytes subscribe_v5(uint16_t packet_id, const std::string& filter) {
  return packet(0x82, cat({{static_cast<uint8_t>(packet_id >> 8), static_cast<uint8_t>(packet_id)}, {0}, str(filter),
                           {0}}));
}
std::string suback_v5(uint16_t packet_id) {  // one filter granted QoS 0, no properties
  return {'\x90', '\x04', static_cast<char>(packet_id >> 8), static_cast<char>(packet_id), '\0', '\0'};
}
std::string as_text(const Bytes& b) { return {b.begin(), b.end()}; }

// A shared subscription gets no retained message (MQTT 4.8.2), so a message
// that reached the channel's owner before the subscription would be lost.
TEST_F(SubscribeAck, AMessagePublishedJustAfterTheSubackReachesASharedSubscription) {
  BlockingSocket mqtt(mqtt_port_);
  ASSERT_TRUE(mqtt.connected());
  ASSERT_TRUE(mqtt.send(as_text(mqtt::testing::connect_v5({0}, "acks"))));
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::string topic = "ACK/M/" + std::to_string(round);
    const auto publish_id = static_cast<uint32_t>(round + 1);
    ASSERT_TRUE(pub_.register_topic(publish_id, PayloadKind::Opaque, topic));
    const auto packet_id = static_cast<uint16_t>(round + 1);
    // The MQTT client is the third connection: on sub_'s access point (2 + 2,
    // round-robin). Two connections keep no order between them, so the
    // burst delays this subscription less surely than the native test's.
    ASSERT_NO_FATAL_FAILURE(burst_beside(topic, "ACK/MB", 1000 + publish_id));
    ASSERT_TRUE(mqtt.send(as_text(subscribe_v5(packet_id, "$share/g" + std::to_string(round) + "/" + topic))));
    const std::string suback = suback_v5(packet_id);
    ASSERT_NE(mqtt.read_until(suback).find(suback), std::string::npos);
    mqtt.forget();
    const std::string payload = "after-suback-" + std::to_string(round) + "!";
    ASSERT_TRUE(pub_.publish(publish_id, {reinterpret_cast<const uint8_t*>(payload.data()), payload.size()}));
    ASSERT_NE(mqtt.read_until(payload).find(payload), std::string::npos) << "lost: published just after the SUBACK";
    mqtt.forget();
  }
}

}  // namespace
}  // namespace tw::it
