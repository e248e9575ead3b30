// MQTT interoperability with MQTT.js (npm `mqtt`, pinned by
// tests/js/mqtt/package-lock.json, installed by scripts/js_deps.sh) over
// TCP: native to MQTT and back, retained images, QoS 1 redelivery after an
// abrupt disconnect and a reconnect (with the Will), shared-subscription
// balancing, topic aliases both ways, a refused subscription. Each test
// starts its broker and runs tests/js/mqtt/interop.mjs in one mode, which
// bounds its own waits (8 s at most) and prints "ok MODE".
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "integration/it_support.h"
#include "testlib/fields.h"
#include "testlib/process.h"

namespace tw::it {
namespace {

using testing::Process;
using testing::run_to_completion;

constexpr int kWaitMs = 10'000;  // a safety net, never a performance bound
const std::string kNode = "/usr/bin/node";
const std::string kJsDir = TW_IT25_JS_DIR;

class MqttJs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (access(kNode.c_str(), X_OK) != 0) return;
    // npm ci of the pinned MQTT.js when node_modules is missing or stale.
    const std::string install = "bash " + std::string(TW_SOURCE_DIR) + "/scripts/js_deps.sh tests/js/mqtt";
    deps_ok_ = std::system(install.c_str()) == 0;
  }

  void SetUp() override {
    if (access(kNode.c_str(), X_OK) != 0) GTEST_SKIP() << "node missing: run scripts/deps.sh";
    ASSERT_TRUE(deps_ok_) << "scripts/js_deps.sh tests/js/mqtt failed";
    mqtt_port_ = testing::pick_free_port();
    BrokerOptions options;
    options.config_toml = "[[listener]]\nprotocol = \"native\"\naddress = \"127.0.0.1:0\"\n"
                          "[[listener]]\nprotocol = \"mqtt\"\naddress = \"127.0.0.1:" +
                          std::to_string(mqtt_port_) + "\"\n";
    broker_ = std::make_unique<BrokerProcess>(options);
    ASSERT_TRUE(broker_->ready()) << broker_->err();
  }

  std::vector<std::string> args(const std::string& mode) const {
    return {kJsDir + "/interop.mjs", mode, std::to_string(mqtt_port_)};
  }
  // Runs one mode to its end and expects "ok MODE".
  void expect_ok(const std::string& mode) const {
    auto run = run_to_completion(kNode, args(mode), kWaitMs);
    EXPECT_TRUE(run.status.clean()) << run.out << run.err;
    EXPECT_NE(run.out.find("ok " + mode), std::string::npos) << run.out << run.err;
  }

  static inline bool deps_ok_ = false;
  uint16_t mqtt_port_ = 0;
  std::unique_ptr<BrokerProcess> broker_;
};

TEST_F(MqttJs, NativeFieldListsReachMqttJsAsJsonAndMqttJsReachesNative) {
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
  auto ack = native.subscribe(2, "it25/mq/x");
  ASSERT_TRUE(ack && ack->code == wire::Code::Ok);
  auto image = native.next_of_type(wire::MsgType::Image, kWaitMs);
  ASSERT_TRUE(image);
  auto decoded = image->as<wire::Image>();
  ASSERT_TRUE(decoded);
  EXPECT_EQ(std::string(decoded->payload.begin(), decoded->payload.end()), "from mqtt.js");
}

TEST_F(MqttJs, TheLastValueIsTheRetainedMessageAndAnEmptyRetainedPublishClearsIt) { expect_ok("retained"); }

TEST_F(MqttJs, AnUnacknowledgedQos1MessageIsRedeliveredAfterAnAbruptDisconnectAndTheWillIsPublished) {
  expect_ok("redeliver");
}

TEST_F(MqttJs, ASharedSubscriptionSpreadsChannelsOverItsMembers) { expect_ok("shared"); }

TEST_F(MqttJs, TopicAliasesWorkInBothDirections) { expect_ok("aliases"); }

TEST_F(MqttJs, AFilterTheBrokerCannotExpressIsRefusedInTheSuback) { expect_ok("refused"); }

}  // namespace
}  // namespace tw::it
