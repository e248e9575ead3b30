// The properties of an MQTT 5 PUBLISH carried on to subscribers
// (docs/mqtt.md, "Message properties"): live, with the retained image, and
// Message Expiry (what is left of it, and nothing sent once it passed), in a
// real MqttSession with the real single-threaded router. The tiers are
// tested end to end (tests/integration/it21_mqtt_test.cc, in every thread
// configuration).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/clock.h"
#include "mqtt/harness.h"

namespace tw::mqtt {
namespace {

using namespace testing;

// User Property (k, v), Content Type "t", Response Topic "r", Correlation Data {7}, as a client sends them.
const Bytes kProps = {0x26, 0, 1, 'k', 0, 1, 'v', 0x03, 0, 1, 't', 0x08, 0, 1, 'r', 0x09, 0, 1, 7};

Bytes with_length(const Bytes& props) { return cat({{static_cast<uint8_t>(props.size())}, props}); }

// A received PUBLISH's property block (shorter than 128 bytes here).
Bytes properties_of(const Received& m) {
  const size_t at = m.topic_end() + (m.qos() ? 2 : 0);
  return Bytes(m.body.begin() + static_cast<long>(at) + 1, m.body.begin() + static_cast<long>(at + 1 + m.body[at]));
}

// The forwarded string (codec.h) of a message with this expiry deadline and these properties, published at QoS `qos`.
Bytes forwarded(uint64_t deadline_ns, const Bytes& props = {}, uint8_t qos = 2) {
  Bytes out(kForwardedHead);
  std::memcpy(out.data(), &deadline_ns, sizeof deadline_ns);
  out[kForwardedHead - 1] = qos;
  return cat({out, props});
}

// Publishes as an MQTT 5 publisher does through the router: with its properties beside the message.
void publish_with(MqttHarness& h, std::string_view topic, std::string_view payload, const Bytes& properties) {
  cache::ChannelId id = 0;
  ASSERT_TRUE(h.router.advertise(topic, wire::PayloadKind::Opaque, id).ok());
  broker::MessageOrigin origin;
  origin.attributes = properties;
  const std::span<const uint8_t> bytes{reinterpret_cast<const uint8_t*>(payload.data()), payload.size()};
  ASSERT_TRUE(h.router.publish(id, bytes, true, fields::Checked::No, origin).ok());
}

TEST(MqttProperties, APublishersPropertiesReachAnMqtt5SubscriberWithoutItsTopicAlias) {
  MqttHarness h;
  h.connect();
  h.subscribe("p/#");
  // Topic Alias 1 and Message Expiry 30 s besides: the alias is the publisher's, the expiry sent anew, first.
  const Bytes in = cat({{0x23, 0, 1, 0x02, 0, 0, 0, 30}, kProps});
  auto got = h.send(publish_qos0("p/x", with_length(in), "v"));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].topic(), "p/x");
  EXPECT_EQ(properties_of(got[0]), cat({{0x02, 0, 0, 0, 30}, kProps}));
  EXPECT_EQ(got[0].payload(), "v");
}

TEST(MqttProperties, TheRetainedMessageCarriesTheLastValuesPropertiesAndANativeValueHasNone) {
  MqttHarness h;
  h.connect();
  Bytes retain1 = publish_qos0("p/r", with_length(kProps), "mqtt");
  retain1[0] |= 1;  // RETAIN 1: a RETAIN 0 message is not retained
  h.send(retain1);
  auto retained = h.subscribe("p/r");
  ASSERT_EQ(retained.size(), 1u);
  EXPECT_EQ(retained[0].first, 0x31);  // RETAIN 1
  EXPECT_EQ(properties_of(retained[0]), kProps);
  EXPECT_EQ(retained[0].payload(), "mqtt");

  h.publish("p/r", "native");  // a publisher without properties: the last value has none
  auto live = h.turn();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_TRUE(properties_of(live[0]).empty());
  cache::ChannelId id = 0;
  ASSERT_TRUE(h.router.advertise("p/r", wire::PayloadKind::Opaque, id).ok());
  EXPECT_TRUE(h.router.channel(id)->attributes.empty());  // what a new subscriber's retained message carries
}

TEST(MqttProperties, AnExpiredLastValueIsNotSentAsTheRetainedMessageNorLive) {
  MqttHarness h;
  h.connect();
  h.subscribe("x/live");
  publish_with(h, "x/live", "late", forwarded(1));  // its deadline passed before the fan-out
  EXPECT_TRUE(h.turn().empty());
  publish_with(h, "x/kept", "stale", forwarded(1, kProps));
  EXPECT_TRUE(h.subscribe("x/kept").empty());
  publish_with(h, "x/fresh", "ok", forwarded(monotonic_ns() + 60'000'000'000ull));
  auto fresh = h.subscribe("x/fresh");
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(properties_of(fresh[0]), (Bytes{0x02, 0, 0, 0, 60}));
  EXPECT_FALSE(h.session->closing());
}

TEST(MqttProperties, AQos1MessageWhoseExpiryPassedIsNotResentAndTheOthersCarryWhatIsLeft) {
  ServerState broker;  // the harnesses are connections to one broker
  const Bytes expiry_60s = {5, 0x11, 0, 0, 0, 60};
  {
    MqttHarness h({}, &broker);
    h.connect(expiry_60s, "expiring");
    h.subscribe("e/#", 1);
    publish_with(h, "e/short", "gone", forwarded(monotonic_ns() + 30'000'000));
    publish_with(h, "e/long", "kept", forwarded(monotonic_ns() + 60'000'000'000ull, kProps));
    auto live = h.turn();
    ASSERT_EQ(live.size(), 2u);
    EXPECT_EQ(properties_of(live[0]), (Bytes{0x02, 0, 0, 0, 1}));  // 30 ms left: rounded up
    h.session->finish();  // neither acknowledged
  }
  ::usleep(60'000);  // the first one's expiry passes while the session is stored
  MqttHarness back({}, &broker);
  auto again = back.connect(expiry_60s, "expiring", 0x00);
  ASSERT_GE(again.size(), 1u);
  EXPECT_EQ(again[0].first, 0x3A);  // PUBLISH, DUP, QoS 1
  EXPECT_EQ(again[0].topic(), "e/long");
  EXPECT_EQ(properties_of(again[0]), cat({{0x02, 0, 0, 0, 60}, kProps}));  // less than a second waited
  for (const Received& m : again) EXPECT_NE(m.topic(), "e/short");
  back.session->finish();
}

// A Will's properties go with it as a PUBLISH's do, less its Will Delay Interval.
TEST(MqttProperties, AWillsPropertiesGoWithIt) {
  MqttHarness h;
  const Bytes will_props = {12, 0x18, 0, 0, 0, 0, 0x26, 0, 1, 'k', 0, 1, 'v'};
  auto got = h.send(packet(0x10, cat({str("MQTT"), {5, 0x06, 0, 30}, {0}, str("w"), will_props, str("w/t"), str("bye")})));
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].first, 0x20);
  h.session->finish();  // no DISCONNECT: the Will is published
  cache::ChannelId id = 0;
  ASSERT_TRUE(h.router.advertise("w/t", wire::PayloadKind::Opaque, id).ok());
  const std::vector<uint8_t>& kept = h.router.channel(id)->attributes;
  EXPECT_EQ(forwarded_deadline(kept), 0u);
  EXPECT_EQ(forwarded_qos(kept), 0u);  // a Will is capped at its own QoS, as a PUBLISH is
  EXPECT_EQ(Bytes(kept.begin() + static_cast<long>(std::min(kForwardedHead, kept.size())), kept.end()),
            (Bytes{0x26, 0, 1, 'k', 0, 1, 'v'}));
}

// A Will without properties still says its QoS (3.1.1: QoS 1 here).
TEST(MqttProperties, AWillGoesAtNoMoreThanItsQos) {
  MqttHarness h;
  auto got = h.send(packet(0x10, cat({str("MQTT"), {4, 0x0E, 0, 30}, str("w"), str("w/q"), str("bye")})));
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].first, 0x20);
  h.session->finish();
  cache::ChannelId id = 0;
  ASSERT_TRUE(h.router.advertise("w/q", wire::PayloadKind::Opaque, id).ok());
  EXPECT_EQ(forwarded_qos(h.router.channel(id)->attributes), 1u);
}

}  // namespace
}  // namespace tw::mqtt
