// A real MqttSession on one end of a socketpair, with the real router and
// fanout: the test writes packets as the client and reads what the broker
// answers. What the interoperability test (it21) cannot reach with stock
// clients: '$' topics and wildcards, topic aliases, the Receive Maximum,
// the client's Maximum Packet Size, Retain Handling 2.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "broker/counters.h"
#include "broker/fanout.h"
#include "broker/router.h"
#include "config/config.h"
#include "mqtt/codec.h"
#include "mqtt/mqtt_session.h"
#include "mqtt/packets.h"
#include "reactor/reactor.h"
#include "base/clock.h"
#include "session/tcp_transport.h"

namespace tw::mqtt {
namespace {

using namespace testing;

struct Received {
  uint8_t first = 0;
  Bytes body;
  // A QoS 0 PUBLISH's topic and payload (MQTT 5: after an empty property block).
  std::string topic() const { return std::string(body.begin() + 2, body.begin() + 2 + (body[0] << 8 | body[1])); }
  std::string payload() const {
    const size_t at = 2 + (body[0] << 8 | body[1]) + 1;
    return std::string(body.begin() + static_cast<long>(at), body.end());
  }
};

struct MqttHarness {
  config::BrokerConfig config;
  reactor::Reactor reactor;
  broker::Fanout fanout{1 << 20};
  broker::Counters counters;
  broker::Router router{broker::RouterLimits{}, fanout};
  session::LoopState loop{64u << 20};
  std::unique_ptr<MqttSession> session;
  int peer = -1;

  MqttHarness() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    ::fcntl(fds[1], F_SETFL, O_NONBLOCK);
    peer = fds[1];
    session = std::make_unique<MqttSession>(MqttSession::Env{config, reactor, router, fanout, counters, loop},
                                            std::make_unique<session::TcpTransport>(fds[0]), "test", 0);
    EXPECT_TRUE(reactor.add(fds[0], EPOLLIN, session.get()));
  }
  ~MqttHarness() {
    if (session->fd() >= 0) reactor.remove(session->fd());
    ::close(peer);
  }
  // Writes as the client, lets the session read, ends the turn, returns what came back.
  std::vector<Received> send(const Bytes& bytes) {
    EXPECT_EQ(::write(peer, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    session->on_io(EPOLLIN);
    return turn();
  }
  std::vector<Received> turn() {
    fanout.flush_all();
    Bytes in(1 << 20);
    ssize_t n = ::read(peer, in.data(), in.size());
    in.resize(n > 0 ? static_cast<size_t>(n) : 0);
    std::vector<Received> out;
    Packet p;
    for (size_t pos = 0; split_packet(std::span<const uint8_t>(in).subspan(pos), 1 << 20, p) == Split::Ok;
         pos += p.size) {
      const auto first = static_cast<uint8_t>(static_cast<uint8_t>(p.type) << 4 | p.flags);
      out.push_back({first, Bytes(p.body.begin(), p.body.end())});
    }
    return out;
  }
  // CONNECT; returns what followed the CONNACK, and whether it said Session Present.
  std::vector<Received> connect(const Bytes& props = {0}, std::string_view client_id = "t", uint8_t flags = 0x02,
                                bool* present = nullptr) {
    auto got = send(connect_v5(props, client_id, flags));
    EXPECT_FALSE(got.empty());
    if (got.empty()) return {};
    EXPECT_EQ(got[0].first, 0x20);
    EXPECT_EQ(got[0].body[1], 0);  // success
    if (present != nullptr) *present = got[0].body[0] == 1;
    return {got.begin() + 1, got.end()};
  }
  // Subscribes with these option bytes; returns what followed the SUBACK.
  std::vector<Received> subscribe(std::string_view filter, uint8_t options = 0) {
    auto got = send(packet(0x82, cat({{0, 1, 0}, str(filter), {options}})));
    EXPECT_FALSE(got.empty());
    if (got.empty()) return {};
    EXPECT_EQ(got[0].first, 0x90);
    return {got.begin() + 1, got.end()};
  }
  // Publishes an opaque message as the router would from any publisher.
  void publish(std::string_view topic, std::string_view payload) {
    cache::ChannelId id = 0;
    ASSERT_TRUE(router.advertise(topic, wire::PayloadKind::Opaque, id).ok());
    ASSERT_TRUE(router.publish(id, {reinterpret_cast<const uint8_t*>(payload.data()), payload.size()}, true).ok());
  }
};

Bytes publish_qos0(std::string_view topic, const Bytes& props, std::string_view payload) {
  return packet(0x30, cat({str(topic), props, Bytes(payload.begin(), payload.end())}));
}

TEST(MqttSession, FirstLevelWildcardsDoNotReachDollarTopics) {
  MqttHarness h;
  h.connect();
  h.publish("$SYS/load", "1");
  h.publish("a/b", "2");
  auto retained = h.subscribe("#");
  ASSERT_EQ(retained.size(), 1u);
  EXPECT_EQ(retained[0].first, 0x31);  // RETAIN: it predates the subscription
  EXPECT_EQ(retained[0].topic(), "a/b");
  h.publish("$SYS/load", "3");
  EXPECT_TRUE(h.turn().empty());
  // A filter with a literal first level reaches them.
  h.subscribe("$SYS/#");
  h.publish("$SYS/load", "4");
  auto live = h.turn();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].first, 0x30);
  EXPECT_EQ(live[0].payload(), "4");

  MqttHarness fresh;
  fresh.connect();
  fresh.publish("$SYS/load", "5");
  retained = fresh.subscribe("$SYS/+");
  ASSERT_EQ(retained.size(), 1u);
  EXPECT_EQ(retained[0].payload(), "5");
}

TEST(MqttSession, HashAlsoMatchesTheParentLevel) {
  MqttHarness h;
  h.connect();
  h.publish("a", "parent");
  h.publish("a/b", "child");
  h.publish("ab", "other");
  auto retained = h.subscribe("a/#");
  ASSERT_EQ(retained.size(), 2u);
  EXPECT_NE(retained[0].topic(), "ab");
  EXPECT_NE(retained[1].topic(), "ab");
}

TEST(MqttSession, TopicAliasesResolveAndUnknownOnesClose) {
  MqttHarness h;
  h.connect();
  h.subscribe("t/#");
  auto first = h.send(publish_qos0("t/a", {3, 0x23, 0, 1}, "one"));  // sets alias 1
  auto second = h.send(publish_qos0("", {3, 0x23, 0, 1}, "two"));    // uses it
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].topic(), "t/a");
  EXPECT_EQ(second[0].payload(), "two");
  h.send(publish_qos0("", {3, 0x23, 0, 2}, "three"));  // alias 2 was never set
  EXPECT_TRUE(h.session->closing());
  EXPECT_EQ(h.counters.protocol_errors, 1u);
}

TEST(MqttSession, MoreUnreleasedQos2MessagesThanReceiveMaximumClose) {
  MqttHarness h;
  h.connect();
  for (uint16_t id = 1; id <= MqttSession::kReceiveMaximum; ++id) {
    auto got = h.send(packet(0x34, cat({str("q/2"), {static_cast<uint8_t>(id >> 8), static_cast<uint8_t>(id), 0}})));
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(got[0].first, 0x50);  // PUBREC
  }
  EXPECT_FALSE(h.session->closing());
  h.send(packet(0x34, cat({str("q/2"), {0xFF, 0xFF, 0}})));
  EXPECT_TRUE(h.session->closing());
}

TEST(MqttSession, NothingLargerThanTheClientsMaximumPacketSizeIsSent) {
  MqttHarness h;
  h.connect({5, 0x27, 0, 0, 0, 20});  // Maximum Packet Size 20
  h.subscribe("m/#");
  h.publish("m/small", "ok");
  h.publish("m/large", std::string(64, 'x'));
  auto got = h.turn();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].topic(), "m/small");
}

TEST(MqttSession, RetainHandling2SendsNoRetainedMessages) {
  MqttHarness h;
  h.connect();
  h.publish("r/x", "old");
  EXPECT_TRUE(h.subscribe("r/#", 0x20).empty());
  h.publish("r/x", "new");
  auto live = h.turn();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].payload(), "new");
}

TEST(MqttSession, AFilterTheBrokerCannotExpressIsRefusedInTheSuback) {
  MqttHarness h;
  h.connect();
  auto got = h.send(packet(0x82, cat({{0, 1, 0}, str("a//b"), {0}, str("$share/g/a"), {0}, str("ok/+"), {0}})));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].body, (Bytes{0, 1, 0, 0x8F, 0x9E, 0x00}));
}

TEST(MqttSession, KeepAliveTimesOutAtOneAndAHalfTimesWithDisconnect0x8D) {
  MqttHarness h;
  h.connect();  // Keep Alive 30 s
  constexpr uint64_t kS = 1'000'000'000;
  const uint64_t start = monotonic_ns();
  h.session->on_tick(start + 44 * kS);
  EXPECT_FALSE(h.session->closing());
  h.session->on_tick(start + 46 * kS);
  ASSERT_TRUE(h.session->closing());
  h.session->finish();
  auto got = h.turn();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, 0xE0);
  EXPECT_EQ(got[0].body[0], 0x8D);
}

TEST(MqttSession, ASessionWithAnExpiryIsResumedWithItsSubscriptionsAndRetainedImages) {
  const Bytes expiry_60s = {5, 0x11, 0, 0, 0, 60};
  {
    MqttHarness h;
    h.connect(expiry_60s, "resume");
    h.subscribe("s/#");
    h.publish("s/x", "while connected");
    h.session->finish();  // the connection ends; the session is kept
  }
  MqttHarness back;
  back.publish("s/x", "while away");
  bool present = false;
  auto images = back.connect(expiry_60s, "resume", 0x00, &present);  // Clean Start 0
  EXPECT_TRUE(present);
  ASSERT_EQ(images.size(), 1u);  // the subscription came back, with the channel's latest value
  EXPECT_EQ(images[0].first, 0x31);
  EXPECT_EQ(images[0].payload(), "while away");
  back.publish("s/x", "live");
  ASSERT_EQ(back.turn().size(), 1u);
  back.session->finish();

  MqttHarness fresh;
  fresh.connect(expiry_60s, "resume", 0x02, &present);  // Clean Start discards it
  EXPECT_FALSE(present);
  fresh.publish("s/x", "not subscribed");
  EXPECT_TRUE(fresh.turn().empty());
}

TEST(MqttSession, ANewConnectionWithTheSameClientIdTakesOver) {
  MqttHarness first, second, other;
  first.connect({0}, "same");
  other.connect({0}, "different");
  second.connect({0}, "same");
  const uint64_t now = monotonic_ns();
  other.session->on_tick(now);
  second.session->on_tick(now);
  EXPECT_FALSE(other.session->closing());
  EXPECT_FALSE(second.session->closing());
  first.session->on_tick(now);  // [MQTT-3.1.4-2]: the older one goes, with DISCONNECT 0x8E
  ASSERT_TRUE(first.session->closing());
  first.session->finish();
  auto got = first.turn();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, 0xE0);
  EXPECT_EQ(got[0].body[0], 0x8E);
}

}  // namespace
}  // namespace tw::mqtt
