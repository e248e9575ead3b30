// A real MqttSession on one end of a socketpair, with the real router and
// fanout: the test writes packets as the client (packets.h) and reads what
// the broker answers.
#pragma once
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "broker/counters.h"
#include "output/fanout.h"
#include "broker/router.h"
#include "config/config.h"
#include "mqtt/codec.h"
#include "mqtt/mqtt_session.h"
#include "mqtt/packets.h"
#include "reactor/reactor.h"
#include "session/tcp_transport.h"

namespace tw::mqtt::testing {

struct Received {
  uint8_t first = 0;
  Bytes body;
  // An MQTT 5 PUBLISH's topic, packet id (QoS 1 and 2) and payload (after its property block).
  uint8_t qos() const { return (first >> 1) & 3; }
  size_t topic_end() const { return 2 + static_cast<size_t>(body[0] << 8 | body[1]); }
  std::string topic() const { return std::string(body.begin() + 2, body.begin() + static_cast<long>(topic_end())); }
  uint16_t packet_id() const {
    return qos() ? static_cast<uint16_t>(body[topic_end()] << 8 | body[topic_end() + 1]) : 0;
  }
  std::string payload() const {
    size_t at = topic_end() + (qos() ? 2 : 0);
    at += 1 + body[at];  // the property block (shorter than 128 bytes here)
    return std::string(body.begin() + static_cast<long>(at), body.end());
  }
};

struct MqttHarness {
  config::BrokerConfig config;
  reactor::Reactor reactor;
  output::Fanout fanout{1 << 20};
  broker::Counters counters;
  broker::RouterLimits limits;
  broker::Router router;
  // The broker's MQTT state (client ids, stored sessions, shared groups): its
  // own, or another harness's when the two stand for connections to one broker.
  ServerState own_server;
  ServerState& server;
  session::LoopState loop{64u << 20};
  std::unique_ptr<MqttSession> session;
  int peer = -1;

  explicit MqttHarness(broker::RouterLimits router_limits = {}, ServerState* same_broker_as = nullptr)
      : limits(router_limits), router(limits, fanout), server(same_broker_as ? *same_broker_as : own_server) {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    ::fcntl(fds[1], F_SETFL, O_NONBLOCK);
    peer = fds[1];
    session = std::make_unique<MqttSession>(MqttSession::Env{config, reactor, router, fanout, counters, loop}, server,
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
  void publish(std::string_view topic, std::string_view payload) { publish(topic, payload, broker::MessageOrigin{}); }
  // As another MQTT client's PUBLISH with this RETAIN flag.
  void publish_mqtt(std::string_view topic, std::string_view payload, bool retain) {
    publish(topic, payload, broker::MessageOrigin{nullptr, 0, 0, retain, !retain, {}});
  }
  void publish(std::string_view topic, std::string_view payload, const broker::MessageOrigin& origin) {
    cache::ChannelId id = 0;
    ASSERT_TRUE(router.advertise(topic, wire::PayloadKind::Opaque, id).ok());
    const std::span<const uint8_t> bytes{reinterpret_cast<const uint8_t*>(payload.data()), payload.size()};
    ASSERT_TRUE(router.publish(id, bytes, true, fields::Checked::No, origin).ok());
  }
};

inline Bytes publish_qos0(std::string_view topic, const Bytes& props, std::string_view payload) {
  return packet(0x30, cat({str(topic), props, Bytes(payload.begin(), payload.end())}));
}

}  // namespace tw::mqtt::testing
