// IT28: text an attacker controls (issue 25, items 9, 11 and 13): names and
// client ids that would forge log lines, topics with hidden characters
// (controls, format characters, separators) on every protocol that names a
// topic, and the CLI's answer when the broker refuses a provider.
#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "auth/password.h"
#include "integration/it_support.h"
#include "testlib/blocking_socket.h"

namespace tw::it {
namespace {

using testing::BlockingSocket;
using testing::bin_path;
using testing::run_to_completion;
using testing::TempDir;
using wire::Code;

constexpr int kWaitMs = 5'000;  // a safety net, never a performance bound

// MQTT 5 by hand (the hostile bytes are the point: client libraries refuse them).
std::string mqtt_str(std::string_view s) {
  return std::string{static_cast<char>(s.size() >> 8), static_cast<char>(s.size() & 0xFF)} + std::string(s);
}
std::string mqtt_packet(uint8_t first, const std::string& body) {
  std::string out(1, static_cast<char>(first));
  size_t n = body.size();
  do {
    uint8_t b = n % 128;
    n /= 128;
    out += static_cast<char>(n > 0 ? (b | 0x80) : b);
  } while (n > 0);
  return out + body;
}
std::string mqtt5_connect(std::string_view client_id) {
  // Level 5, Clean Start, keep alive 60 s, no properties.
  return mqtt_packet(0x10, mqtt_str("MQTT") + std::string("\x05\x02\x00\x3c\x00", 5) + mqtt_str(client_id));
}
// PUBLISH QoS 1, packet id 1, no properties.
std::string mqtt5_publish_qos1(std::string_view topic) {
  return mqtt_packet(0x32, mqtt_str(topic) + std::string("\x00\x01\x00", 3) + "v");
}

std::string percent_encode(std::string_view text) {
  std::ostringstream out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.') {
      out << c;
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out << hex;
    }
  }
  return out.str();
}

class HostileText : public ::testing::Test {
 protected:
  void SetUp() override {
    mqtt_port_ = testing::pick_free_port();
    http_port_ = testing::pick_free_port();
    BrokerOptions options;
    options.log_level = "debug";
    options.config_toml = native_and_mqtt_listeners(mqtt_port_) + "[[listener]]\nprotocol = \"http\"\naddress = \"127.0.0.1:" +
                          std::to_string(http_port_) + "\"\n";
    broker_ = std::make_unique<BrokerProcess>(options);
    ASSERT_TRUE(broker_->ready()) << broker_->err();
  }

  // Waits until the broker's log holds `text`.
  bool logged(const std::string& text) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    while (broker_->err().find(text) == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }

  // The MQTT reason code of the PUBACK that answers a QoS 1 PUBLISH to `topic`.
  int mqtt_publish_reason(const std::string& topic) {
    BlockingSocket s(mqtt_port_);
    EXPECT_TRUE(s.connected());
    EXPECT_TRUE(s.send(mqtt5_connect("hostile-topic")));
    const std::string& connack = s.read_until(std::string("\x20", 1));
    EXPECT_GE(connack.size(), 4u);
    s.forget();
    EXPECT_TRUE(s.send(mqtt5_publish_qos1(topic)));
    // PUBACK: 0x40, remaining length, packet id (2), then the reason code,
    // which a success may leave out (remaining length 2, 3.4.2.1).
    const std::string& puback = s.read_until(std::string("\x40", 1));
    const size_t at = puback.find('\x40');
    if (at == std::string::npos || puback.size() < at + 4) {
      ADD_FAILURE() << "no PUBACK for the PUBLISH to " << ::testing::PrintToString(topic);
      return -1;
    }
    if (puback[at + 1] == 2) return 0;
    return puback.size() < at + 5 ? -1 : static_cast<uint8_t>(puback[at + 4]);  // one segment on loopback
  }

  int rest_publish_status(const std::string& topic) {
    BlockingSocket s(http_port_);
    EXPECT_TRUE(s.send("POST /api/v1/publish/" + percent_encode(topic) +
                       " HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: 1\r\nConnection: close\r\n\r\nv"));
    s.read_to_close();
    const std::string& reply = s.received();
    return reply.size() > 12 ? std::stoi(reply.substr(9, 3)) : -1;
  }

  uint16_t mqtt_port_ = 0;
  uint16_t http_port_ = 0;
  std::unique_ptr<BrokerProcess> broker_;
};

// No log line may begin with text a client chose: the name's newline, carriage
// return and terminal escape are written as \xNN.
TEST_F(HostileText, NamesAndClientIdsCannotForgeLogLines) {
  const std::string forged = "2026-12-02T00:00:00.000Z ERROR forged by ";
  RawClient native;
  ASSERT_TRUE(native.connect(broker_->port()));
  auto welcome = native.hello("feed\n" + forged + "native\r\x1b[2J");
  ASSERT_TRUE(welcome && welcome->type() == wire::MsgType::Welcome);
  BlockingSocket mqtt(mqtt_port_);
  ASSERT_TRUE(mqtt.send(mqtt5_connect("dev\n" + forged + "mqtt\xc2\x85\xe2\x80\xae")));
  mqtt.read_until(std::string("\x20", 1));

  ASSERT_TRUE(logged("HELLO from 'feed\\x0A" + forged + "native\\x0D\\x1B[2J'")) << broker_->err();
  ASSERT_TRUE(logged("CONNECT from 'dev\\x0A" + forged + "mqtt\\u{0085}\\u{202E}'")) << broker_->err();
  std::istringstream lines(broker_->err());
  for (std::string line; std::getline(lines, line);) {
    EXPECT_NE(line.rfind("2026-12-02T00:00:00.000Z", 0), 0u) << "a forged line: " << line;
    EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
    EXPECT_EQ(line.find('\r'), std::string::npos) << line;
  }
}

// Look-alike topics: NEL (U+0085, a C1 control), zero-width space, the
// right-to-left override, the line separator, a soft hyphen and a BOM are
// refused by the native protocol (REGISTER and SUBSCRIBE), MQTT and REST;
// the same topic with an accented letter in their place is served.
TEST_F(HostileText, HiddenCharactersInTopicsAreRefusedOnEveryProtocol) {
  const std::vector<std::string> hidden = {"\xc2\x85", "\xe2\x80\x8b", "\xe2\x80\xae", "\xe2\x80\xa8", "\xc2\xad",
                                           "\xef\xbb\xbf", "\xf3\xa0\x80\x81"};
  for (const std::string& c : hidden) {
    const std::string topic = "EQ/I" + c + "BM";
    RawClient pub;
    ASSERT_TRUE(open_client(pub, broker_->port(), "pub"));
    ASSERT_TRUE(pub.register_topic(1, wire::PayloadKind::Opaque, topic));
    auto closed = pub.wait_closed_with();
    ASSERT_TRUE(closed) << "REGISTER of a topic holding " << ::testing::PrintToString(c) << " was accepted";
    EXPECT_EQ(*closed, Code::InvalidTopic);

    RawClient sub;
    ASSERT_TRUE(open_client(sub, broker_->port(), "sub"));
    auto ack = sub.subscribe(1, "EQ/" + c + ">");
    ASSERT_TRUE(ack);
    EXPECT_EQ(ack->code, Code::InvalidTopic) << ::testing::PrintToString(c);

    EXPECT_EQ(mqtt_publish_reason(topic), 0x90) << ::testing::PrintToString(c);  // Topic Name invalid
    EXPECT_EQ(rest_publish_status(topic), 400) << ::testing::PrintToString(c);
  }
  const std::string visible = "EQ/I\xc3\xa9" "BM";
  EXPECT_EQ(mqtt_publish_reason(visible), 0x00);
  EXPECT_EQ(rest_publish_status(visible), 200);
}

// `tickwire provider` as a user who may not provide: the broker's refusal is
// the command's answer (exit 1, the reason on stderr), never "serving".
TEST(HostileTextCli, RefusedProviderExitsWithTheBrokersAnswer) {
  TempDir dir;
  auto hashed = auth::hash_password("viewer-pw", auth::HashCost{1, 1024, 1});
  ASSERT_TRUE(hashed);
  const std::string users = dir.write("users.toml", "[users.viewer]\npassword = \"" + *hashed +
                                                        "\"\n[[users.viewer.rule]]\nallow = [\"subscribe\"]\ntopics = [\"SVC/>\"]\n");
  BrokerOptions options;
  options.config_toml = "auth_file = \"" + users + "\"\n";
  BrokerProcess broker(options);
  ASSERT_TRUE(broker.ready()) << broker.err();
  const std::string password = dir.write("pw", "viewer-pw\n");
  auto run = run_to_completion(bin_path("tickwire"), {"-s", "127.0.0.1:" + std::to_string(broker.port()), "--user", "viewer",
                                                      "--password-file", password, "provider", "SVC", "--seconds", "3"});
  ASSERT_FALSE(run.timed_out);
  EXPECT_TRUE(run.status.exited && run.status.code != 0) << testing::describe(run.status) << "\n" << run.out << run.err;
  EXPECT_EQ(run.out.find("serving"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("NOT_AUTHORIZED"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace tw::it
