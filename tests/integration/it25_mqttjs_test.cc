// MQTT interoperability with MQTT.js (npm `mqtt`, pinned by
// tests/js/mqtt/package-lock.json, installed by scripts/js_deps.sh) over
// TCP (mqtt://, the MQTT listener) and over WebSocket (ws://.../mqtt, the
// HTTP listener), the same modes for both: native to MQTT and back, retained images, QoS 1 redelivery after an
// abrupt disconnect and a reconnect (with the Will), shared-subscription
// balancing, topic aliases both ways, a refused subscription, No Local and
// Retain As Published. Each test
// starts its broker and runs tests/js/mqtt/interop.mjs in one mode, which
// bounds its own waits (60 s at most) and prints "ok MODE". With Debian's
// python3-paho-mqtt (3.1.1 and 5), what it21 does not cover: QoS 1
// redelivery after an abrupt close and a reconnect, the same session taken
// over by a second connection while the first is still connected,
// shared-subscription balancing, a refused subscription, and the QoS a
// message reaches a subscriber with (it25_paho_clients.py).
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "integration/it_support.h"
#include "testlib/fields.h"
#include "testlib/process.h"

namespace tw::it {
namespace {

using testing::Process;
using testing::run_to_completion;

constexpr int kWaitMs = 90'000;  // a safety net, never a performance bound (interop.mjs stops at 60 s)
const std::string kNode = "/usr/bin/node";
const std::string kJsDir = TW_IT25_JS_DIR;
const std::string kPython = "/usr/bin/python3";

// How MQTT.js reaches the broker: the MQTT listener, or /mqtt on the HTTP listener.
enum class Transport { Tcp, WebSocket };
const char* name_of(Transport t) { return t == Transport::Tcp ? "tcp" : "ws"; }
// For gtest's test listing ("GetParam() = ws", not the enum's bytes).
void PrintTo(Transport t, std::ostream* os) { *os << name_of(t); }

// A broker with a native, an MQTT and an HTTP listener.
class MqttClients : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    deps_ok_ = false;
    if (!has_node()) return;
    // npm ci of the pinned MQTT.js when node_modules is missing or stale; under
    // a lock, since ctest runs several of these processes at once.
    const std::string install = "flock /tmp/tickwire-js-mqtt.lock bash " + std::string(TW_SOURCE_DIR) +
                                "/scripts/js_deps.sh tests/js/mqtt";
    deps_ok_ = std::system(install.c_str()) == 0;
  }

  void SetUp() override {
    mqtt_port_ = testing::pick_free_port();
    http_port_ = testing::pick_free_port();
    BrokerOptions options;
    options.config_toml = native_and_mqtt_listeners(mqtt_port_) + "[[listener]]\nprotocol = \"http\"\naddress = \"127.0.0.1:" +
                          std::to_string(http_port_) + "\"\n";
    broker_ = std::make_unique<BrokerProcess>(options);
    ASSERT_TRUE(broker_->ready()) << broker_->err();
  }

  // MQTT.js needs node (scripts/deps.sh installs it: in CI these tests run).
  static bool has_node() { return access(kNode.c_str(), X_OK) == 0; }

  static inline bool deps_ok_ = false;
  uint16_t mqtt_port_ = 0;
  uint16_t http_port_ = 0;
  std::unique_ptr<BrokerProcess> broker_;
};

// MQTT.js, in each mode of interop.mjs, over the transport of the parameter.
class MqttJs : public MqttClients, public ::testing::WithParamInterface<Transport> {
 protected:
  std::string url() const {
    if (GetParam() == Transport::WebSocket) return "ws://127.0.0.1:" + std::to_string(http_port_) + "/mqtt";
    return "mqtt://127.0.0.1:" + std::to_string(mqtt_port_);
  }
  std::vector<std::string> args(const std::string& mode) const {
    return {kJsDir + "/interop.mjs", mode, url()};
  }
  // Runs one mode to its end and expects "ok MODE".
  void expect_ok(const std::string& mode) const {
    ASSERT_TRUE(deps_ok_) << "scripts/js_deps.sh tests/js/mqtt failed";
    auto run = run_to_completion(kNode, args(mode), kWaitMs);
    EXPECT_TRUE(run.status.clean()) << run.out << run.err;
    EXPECT_NE(run.out.find("ok " + mode), std::string::npos) << run.out << run.err;
  }
};

INSTANTIATE_TEST_SUITE_P(Transports, MqttJs, ::testing::Values(Transport::Tcp, Transport::WebSocket),
                         [](const ::testing::TestParamInfo<Transport>& info) {
                           return name_of(info.param);
                         });

#define REQUIRE_NODE() \
  if (!has_node()) GTEST_SKIP() << "node missing: run scripts/deps.sh"

TEST_P(MqttJs, NativeFieldListsReachMqttJsAsJsonAndMqttJsReachesNative) {
  REQUIRE_NODE();
  ASSERT_TRUE(deps_ok_) << "scripts/js_deps.sh tests/js/mqtt failed";
  Process sub(kNode, args("subscribe"));
  ASSERT_TRUE(sub.wait_for_out("ready", kWaitMs)) << sub.out() << sub.err();
  RawClient native;
  ASSERT_TRUE(open_client(native, broker_->port(), "it25-native"));
  ASSERT_TRUE(native.register_topic(1, wire::PayloadKind::FieldList, "it25/eq/IBM"));
  fields::Decimal bid;
  ASSERT_TRUE(fields::Decimal::parse("189.25", bid));
  ASSERT_TRUE(native.publish(1, testing::field_list({{22, bid}}), true));
  ASSERT_TRUE(sub.wait(kWaitMs).has_value()) << sub.out();
  EXPECT_NE(sub.out().find("\"topic\":\"it25/eq/IBM\""), std::string::npos) << sub.out();
  EXPECT_NE(sub.out().find("\\\"fields\\\":{\\\"BID\\\":\\\"189.25\\\"}"), std::string::npos) << sub.out();
  EXPECT_NE(sub.out().find("\"retain\":false"), std::string::npos) << sub.out();  // published after the SUBACK

  expect_ok("publish");
  EXPECT_EQ(subscribe_for_image(native, 2, "it25/mq/x", kWaitMs), "from mqtt.js");
}

TEST_P(MqttJs, ARetainedPublishIsTheRetainedMessageAndAnEmptyRetainedPublishClearsIt) {
  REQUIRE_NODE();
  expect_ok("retained");
}

TEST_P(MqttJs, AnUnacknowledgedQos1MessageIsRedeliveredAfterAnAbruptDisconnectAndTheWillIsPublished) {
  REQUIRE_NODE();
  expect_ok("redeliver");
}

TEST_P(MqttJs, ASharedSubscriptionSpreadsChannelsOverItsMembers) {
  REQUIRE_NODE();
  expect_ok("shared");
}

TEST_P(MqttJs, TopicAliasesWorkInBothDirections) {
  REQUIRE_NODE();
  expect_ok("aliases");
}

TEST_P(MqttJs, AFilterTheBrokerCannotExpressIsRefusedInTheSuback) {
  REQUIRE_NODE();
  expect_ok("refused");
}

TEST_P(MqttJs, NoLocalKeepsAClientsOwnPublishesFromItsSubscription) {
  REQUIRE_NODE();
  expect_ok("nolocal");
}

TEST_P(MqttJs, RetainAsPublishedKeepsTheRetainFlagOfLiveMessages) {
  REQUIRE_NODE();
  expect_ok("rap");
}

using Paho = MqttClients;

TEST_F(Paho, RedeliverySharedSubscriptionsAndARefusedSubscriptionIn311And5) {
  for (std::string version : {"311", "5"}) {
    for (std::string mode : {"redeliver", "takeover", "shared", "refused"}) {
      auto run = run_to_completion(kPython, {TW_IT25_PAHO_CLIENTS, mode, version, std::to_string(mqtt_port_)}, kWaitMs);
      EXPECT_TRUE(run.status.clean()) << run.out << run.err;
      EXPECT_NE(run.out.find("ok " + mode + " " + version), std::string::npos) << run.out << run.err;
    }
  }
}

TEST_F(Paho, AMessageReachesASubscriberAtNoMoreThanTheQosItWasPublishedWithIn311And5) {
  for (std::string version : {"311", "5"}) {
    auto run = run_to_completion(kPython, {TW_IT25_PAHO_CLIENTS, "qos", version, std::to_string(mqtt_port_)}, kWaitMs);
    EXPECT_TRUE(run.status.clean()) << run.out << run.err;
    EXPECT_NE(run.out.find("ok qos " + version), std::string::npos) << run.out << run.err;
  }
}

}  // namespace
}  // namespace tw::it
