// Differential tests against mosquitto 2.0.11 (Debian's /usr/sbin/mosquitto,
// scripts/deps.sh): the same raw packet sequences, valid and malformed (bad
// remaining length, reserved flags, invalid UTF-8, QoS 3, oversize, ...), go
// to both brokers, and their answers are compared in a normal form (packet
// types, packet ids, reason codes, a delivered PUBLISH's topic, properties
// and payload; not the CONNACK properties, which state each broker's own
// limits), plus whether the connection stayed open.
// Where tickwire answers differently, the case names the specification
// section that allows tickwire's answer and states both answers, so a
// change on either side shows. mosquitto runs on a free port with a
// generated configuration, started and stopped by the test.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "integration/it_support.h"
#include "mqtt/packets.h"
#include "testlib/process.h"

namespace tw::it {
namespace {

using mqtt::testing::Bytes;
using mqtt::testing::cat;
using mqtt::testing::packet;
using mqtt::testing::str;
constexpr int kWaitMs = 5'000;  // a safety net, never a performance bound
const std::string kMosquitto = "/usr/sbin/mosquitto";
const Bytes kPingreq = {0xC0, 0x00};

Bytes connect5(uint8_t flags = 0x02) { return packet(0x10, cat({str("MQTT"), {5, flags, 0, 30, 0}, str("diff")})); }
Bytes connect4(uint8_t flags = 0x02, std::string_view id = "diff") {
  return packet(0x10, cat({str("MQTT"), {4, flags, 0, 30}, str(id)}));
}

// Writes `input` to 127.0.0.1:port; when `open` expects the connection to
// stay open, a PINGREQ follows and its PINGRESP ends the answer; otherwise
// the answer ends when the broker closes. The PINGREQ waits for the first
// `publishes` PUBLISH packets: a tiered broker answers PINGREQ on the access
// point at once, while a message comes back through a gateway. The normal
// form of the answer.
std::string exchange(uint16_t port, const Bytes& input, bool v5, bool open, size_t publishes = 0);
// How many PUBLISH packets an expected answer holds.
size_t publishes_in(const std::string& answer) {
  size_t n = 0;
  for (size_t at = answer.find("PUBLISH "); at != std::string::npos; at = answer.find("PUBLISH ", at + 1)) ++n;
  return n;
}
// Whether something accepts connections on the port, within kWaitMs.
bool listening(uint16_t port);

struct Case {
  const char* name;
  bool v5;
  Bytes input;
  bool open;              // the connection is expected to stay open
  std::string mosquitto;  // both brokers' answer, or mosquitto's alone where `spec` is set
  const char* spec = nullptr;  // where tickwire differs: the section that allows its answer
  std::string tickwire = {};
};

std::vector<Case> cases() {
  const std::string ok5 = "CONNACK 0 0 | ";
  return {
      {"valid 5.0 CONNECT", true, connect5(), true, ok5 + "open"},
      {"valid 3.1.1 CONNECT", false, connect4(), true, "CONNACK 0 0 | open"},
      {"protocol level 6", false, packet(0x10, cat({str("MQTT"), {6, 2, 0, 30, 0}, str("d")})), false,
       "CONNACK 0 1 | closed"},
      {"3.1.1 empty client id without Clean Session", false, connect4(0x00, ""), false, "CONNACK 0 2 | closed"},
      {"first packet not CONNECT", true, kPingreq, false, "closed"},
      {"reserved CONNECT flag", true, connect5(0x03), false, "closed", "[MQTT-3.1.2-3], 3.2.2.2 (CONNACK 0x81 before closing)",
       "CONNACK 0 81 | closed"},
      {"second CONNECT", true, cat({connect5(), connect5()}), false, ok5 + "closed",
       "[MQTT-3.1.0-2], 4.13.1 (DISCONNECT 0x82 may precede the close)", ok5 + "DISCONNECT 82 | closed"},
      {"remaining length of 5 bytes", true, cat({connect5(), {0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F}}), false,
       ok5 + "closed", "[MQTT-1.5.5-1], 4.13.1 (DISCONNECT 0x81 may precede the close)", ok5 + "DISCONNECT 81 | closed"},
      {"QoS 3 PUBLISH", true, cat({connect5(), packet(0x36, cat({str("a"), {0, 1, 0}}))}), false,
       ok5 + "DISCONNECT 81 | closed"},
      {"QoS 0 PUBLISH with DUP", true, cat({connect5(), packet(0x38, cat({str("a"), {0}}))}), true, ok5 + "open",
       "[MQTT-3.3.1-2]: DUP must be 0 at QoS 0, a Malformed Packet", ok5 + "DISCONNECT 81 | closed"},
      {"invalid UTF-8 topic (5.0)", true, cat({connect5(), packet(0x30, cat({str("\xC0\x80"), {0}}))}), false,
       ok5 + "DISCONNECT 81 | closed"},
      {"invalid UTF-8 topic (3.1.1)", false, cat({connect4(), packet(0x30, str("\xC0\x80"))}), false,
       "CONNACK 0 0 | closed"},
      {"SUBSCRIBE with reserved flags 0", true, cat({connect5(), packet(0x80, cat({{0, 1, 0}, str("a"), {0}}))}), false,
       ok5 + "DISCONNECT 81 | closed"},
      {"packet over the maximum size", true, cat({connect5(), {0x30, 0x80, 0x80, 0x80, 0x01}}), false,
       ok5 + "DISCONNECT 95 | closed"},
      {"wildcard in a PUBLISH topic", true, cat({connect5(), packet(0x30, cat({str("a/+"), {0}}))}), false,
       ok5 + "DISCONNECT 82 | closed", "[MQTT-3.3.2-2], 3.14.2.1 (0x90 Topic Name invalid)",
       ok5 + "DISCONNECT 90 | closed"},
      {"Topic Alias 0", true, cat({connect5(), packet(0x30, cat({str("a"), {3, 0x23, 0, 0}}))}), false,
       ok5 + "DISCONNECT 81 | closed", "[MQTT-3.3.2-8], 3.3.2.3.4 (a Protocol Error: 0x94 Topic Alias invalid)",
       ok5 + "DISCONNECT 94 | closed"},
      {"QoS 1 PUBLISH", true, cat({connect5(), packet(0x32, cat({str("a"), {0, 1, 0}, {'x'}}))}), true,
       ok5 + "PUBACK 1 0 | open"},
      {"QoS 2 PUBLISH and PUBREL", true,
       cat({connect5(), packet(0x34, cat({str("a"), {0, 2, 0}, {'x'}})), packet(0x62, {0, 2})}), true,
       ok5 + "PUBREC 2 0 | PUBCOMP 2 0 | open"},
      {"PUBREL of an unknown packet id", true, cat({connect5(), packet(0x62, {0, 9})}), true,
       ok5 + "PUBCOMP 9 0 | open", "4.3.3, 3.7.2.1 (PUBCOMP 0x92 Packet Identifier not found)",
       ok5 + "PUBCOMP 9 92 | open"},
      {"Payload Format 1 with a non-UTF-8 payload", true,
       cat({connect5(), packet(0x32, cat({str("a"), {0, 1, 2, 0x01, 1}, {0xFF}}))}), true, ok5 + "PUBACK 1 0 | open",
       "3.3.2.3.2 (the Server may check it: PUBACK 0x99)", ok5 + "PUBACK 1 99 | open"},
      {"SUBSCRIBE", true, cat({connect5(), packet(0x82, cat({{0, 1, 0}, str("a/+"), {1}}))}), true,
       ok5 + "SUBACK 1 1 | open"},
      {"'#' not last in a filter (5.0)", true, cat({connect5(), packet(0x82, cat({{0, 1, 0}, str("a/#/b"), {0}}))}),
       false, ok5 + "DISCONNECT 81 | closed", "[MQTT-4.7.1-1], 3.9.3 (SUBACK 0x8F Topic Filter invalid)",
       ok5 + "SUBACK 1 8f | open"},
      {"'#' not last in a filter (3.1.1)", false, cat({connect4(), packet(0x82, cat({{0, 1}, str("a/#/b"), {0}}))}),
       false, "CONNACK 0 0 | closed", "3.1.1 [MQTT-4.7.1-2], [MQTT-3.9.3-2] (SUBACK 0x80 Failure)",
       "CONNACK 0 0 | SUBACK 1 80 | open"},
      // [MQTT-3.8.3-3]: the client's own message does not come back (it would come before the PUBACK).
      {"No Local subscription, then a PUBLISH to it", true,
       cat({connect5(), packet(0x82, cat({{0, 1, 0}, str("nl"), {0x04}})), packet(0x32, cat({str("nl"), {0, 2, 0}, {'x'}}))}),
       true, ok5 + "SUBACK 1 0 | PUBACK 2 0 | open"},
      // 3.3.2.3: the properties reach the subscriber (here the publisher itself), all but the Topic Alias.
      {"PUBLISH with properties to a subscription", true,
       cat({connect5(), packet(0x82, cat({{0, 1, 0}, str("pp"), {0}})),
            packet(0x30, cat({str("pp"), {36, 0x23, 0, 1}, {0x26, 0, 1, 'k', 0, 1, 'v'}, {0x02, 0, 0, 0, 60},
                              {0x03, 0, 1, 't'}, {0x26, 0, 1, 'k', 0, 1, 'w'}, {0x08, 0, 1, 'r'}, {0x09, 0, 1, 7},
                              {0x01, 1}, {'x'}}))}),
       true,
       ok5 + "SUBACK 1 0 | PUBLISH pp 01:01 02:0000003c 03:000174 08:000172 09:000107 26:00016b000176 "
             "26:00016b000177 x | open"},
      {"UNSUBSCRIBE of no subscription", true, cat({connect5(), packet(0xA2, cat({{0, 1, 0}, str("zz")}))}), true,
       ok5 + "UNSUBACK 1 11 | open"},
      {"DISCONNECT", true, cat({connect5(), packet(0xE0, {0})}), false, ok5 + "closed"},
  };
}

class MosquittoDiff : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(kMosquitto.c_str(), X_OK) != 0) GTEST_SKIP() << "mosquitto missing: run scripts/deps.sh";
    const uint16_t port = testing::pick_free_port();
    // The same Maximum Packet Size as tickwired's default limits.max_frame (1 MiB).
    const std::string conf = dir_.write("mosquitto.conf", "listener " + std::to_string(port) +
                                                              " 127.0.0.1\nallow_anonymous true\npersistence false\n"
                                                              "max_packet_size 1048576\n");
    mosquitto_ = std::make_unique<testing::Process>(kMosquitto, std::vector<std::string>{"-c", conf});
    ASSERT_TRUE(listening(port)) << mosquitto_->out() << mosquitto_->err();
    mosquitto_port_ = port;
    tickwire_port_ = testing::pick_free_port();
    BrokerOptions options;
    options.config_toml = native_and_mqtt_listeners(tickwire_port_);
    broker_ = std::make_unique<BrokerProcess>(options);
    ASSERT_TRUE(broker_->ready()) << broker_->err();
  }
  void TearDown() override {
    if (mosquitto_) mosquitto_->stop();
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::Process> mosquitto_;
  uint16_t mosquitto_port_ = 0;
  uint16_t tickwire_port_ = 0;
  std::unique_ptr<BrokerProcess> broker_;
};

TEST_F(MosquittoDiff, TheSamePacketsGetTheSameAnswersOrTheSpecificationSays) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(exchange(mosquitto_port_, c.input, c.v5, c.open, publishes_in(c.mosquitto)), c.mosquitto) << "mosquitto";
    const std::string& expected = c.spec ? c.tickwire : c.mosquitto;
    EXPECT_EQ(exchange(tickwire_port_, c.input, c.v5, c.spec ? c.tickwire.ends_with("open") : c.open,
                       publishes_in(expected)),
              expected)
        << "tickwire" << (c.spec ? std::string(", as ") + c.spec : std::string());
  }
}

// ---- the raw client and the normal form

// A return or reason code: small ones in decimal (QoS, 3.1.1 return codes), reasons (0x10 and up) in hex.
std::string code(uint8_t b) {
  static const char* digits = "0123456789abcdef";
  return b < 16 ? std::to_string(b) : std::string{digits[b >> 4], digits[b & 15]};
}

// The bytes of one property's value (after its id) in a PUBLISH to a subscriber.
size_t property_value_size(uint8_t id, const Bytes& b, size_t at) {
  auto u16 = [&](size_t i) { return i + 2 <= b.size() ? static_cast<size_t>(b[i] << 8 | b[i + 1]) : b.size(); };
  switch (id) {
    case 0x01: return 1;
    case 0x02: return 4;
    case 0x23: return 2;
    case 0x0B: {
      size_t n = 1;
      while (at + n - 1 < b.size() && (b[at + n - 1] & 0x80)) ++n;
      return n;
    }
    case 0x26: return 2 + u16(at) + 2 + u16(at + 2 + u16(at));
    default: return 2 + u16(at);  // strings and binary data
  }
}

// A PUBLISH: its topic, MQTT 5 properties as id:value in hex (User
// Properties in their order, the others sorted: brokers order them as they
// like) and its payload.
std::string publish_form(uint8_t first, const Bytes& body, bool v5) {
  if (body.size() < 2) return "PUBLISH ?";
  size_t at = 2 + static_cast<size_t>(body[0] << 8 | body[1]) + (((first >> 1) & 3) ? 2 : 0);
  if (at > body.size()) return "PUBLISH ?";
  std::string out = "PUBLISH " + std::string(body.begin() + 2, body.begin() + 2 + (body[0] << 8 | body[1]));
  if (v5 && at < body.size()) {
    const size_t end = at + 1 + body[at];  // properties shorter than 128 bytes here
    std::vector<std::pair<uint8_t, std::string>> props;
    static const char* digits = "0123456789abcdef";
    for (at += 1; at < end && at < body.size();) {
      const uint8_t id = body[at++];
      const size_t n = std::min(property_value_size(id, body, at), body.size() - at);
      std::string hex;
      for (size_t i = 0; i < n; ++i) hex += {digits[body[at + i] >> 4], digits[body[at + i] & 15]};
      props.emplace_back(id, std::string{digits[id >> 4], digits[id & 15], ':'} + hex);
      at += n;
    }
    std::stable_sort(props.begin(), props.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& p : props) out += " " + p.second;
  }
  return out + " " + std::string(body.begin() + static_cast<long>(std::min(at, body.size())), body.end());
}

// One packet's normal form: its type, and the ids and codes both brokers must agree on.
std::string normal_form(uint8_t first, const Bytes& body, bool v5) {
  const uint8_t type = first >> 4;
  auto u16 = [&](size_t at) { return body.size() >= at + 2 ? std::to_string(body[at] << 8 | body[at + 1]) : "?"; };
  switch (type) {
    case 2: return "CONNACK " + code(body.size() > 0 ? body[0] : 0) + " " + code(body.size() > 1 ? body[1] : 0);
    case 4:
    case 5:
    case 6:
    case 7: {
      static const char* names[] = {"PUBACK", "PUBREC", "PUBREL", "PUBCOMP"};
      // 0x10 (No matching subscribers) is a success as 0x00 is (3.4.2.1): mosquitto says it, tickwire need not.
      const uint8_t reason = body.size() > 2 && body[2] != 0x10 ? body[2] : 0;
      return std::string(names[type - 4]) + " " + u16(0) + " " + code(reason);
    }
    case 9:
    case 11: {
      std::string out = (type == 9 ? "SUBACK " : "UNSUBACK ") + u16(0);
      size_t at = 2;
      if (v5 && body.size() > at) at += 1 + body[at];  // properties (shorter than 128 bytes here)
      for (; at < body.size(); ++at) out += " " + code(body[at]);
      return out;
    }
    case 3: return publish_form(first, body, v5);
    case 14: return "DISCONNECT " + code(body.empty() ? 0 : body[0]);
    default: return "type " + std::to_string(type);
  }
}

int connect_to(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return fd;
  ::close(fd);
  return -1;
}

bool listening(uint16_t port) {
  for (int waited_ms = 0; waited_ms < kWaitMs; waited_ms += 10) {
    if (const int fd = connect_to(port); fd >= 0) return ::close(fd), true;
    ::usleep(10'000);
  }
  return false;
}

std::string exchange(uint16_t port, const Bytes& input, bool v5, bool open, size_t publishes) {
  const int fd = connect_to(port);
  if (fd < 0) return "connect failed";
  Bytes out = input;
  bool pinged = !open || publishes == 0;
  if (open && pinged) out.insert(out.end(), kPingreq.begin(), kPingreq.end());
  (void)!::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
  Bytes in;
  std::string answer;
  bool ended = false, pong = false;
  while (!ended && !pong) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, kWaitMs) <= 0) break;  // the safety net: reported as neither open nor closed
    uint8_t buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      ended = true;  // closed, or reset
      break;
    }
    in.insert(in.end(), buf, buf + n);
    // Cut whole packets (remaining lengths here fit one or two bytes).
    size_t pos = 0;
    while (pos + 2 <= in.size()) {
      size_t len = in[pos + 1] & 0x7F, head = 2;
      if (in[pos + 1] & 0x80) {
        if (pos + 3 > in.size()) break;
        len |= static_cast<size_t>(in[pos + 2]) << 7, head = 3;
      }
      if (pos + head + len > in.size()) break;
      const uint8_t first = in[pos];
      const Bytes body(in.begin() + static_cast<long>(pos + head), in.begin() + static_cast<long>(pos + head + len));
      pos += head + len;
      if (first == 0xD0) {
        pong = true;
        break;
      }
      answer += normal_form(first, body, v5) + " | ";
      if (!pinged && (first >> 4) == 3 && --publishes == 0) {
        (void)!::send(fd, kPingreq.data(), kPingreq.size(), MSG_NOSIGNAL);
        pinged = true;
      }
    }
    in.erase(in.begin(), in.begin() + static_cast<long>(pos));
  }
  ::close(fd);
  return answer + (pong ? "open" : ended ? "closed" : "no answer");
}

}  // namespace
}  // namespace tw::it
