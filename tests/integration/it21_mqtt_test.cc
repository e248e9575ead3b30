// MQTT interoperability with clients nobody here wrote: Debian's
// mosquitto_pub and mosquitto_sub (mosquitto-clients) and python3-paho-mqtt,
// installed by scripts/deps.sh. Each test starts its broker with an MQTT
// listener and checks one behaviour end to end: native to MQTT and back, the
// last-value cache as retained messages, the Will, the QoS 1 and 2 flows,
// a malformed packet closing that client alone, MQTT over TLS, and MQTT 5
// message properties (live, retained, expiry, request/response). Every client process is
// bounded (-C/-W, timeouts) and stopped by the test.
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "auth/password.h"
#include "integration/it_support.h"
#include "testlib/fields.h"
#include "testlib/process.h"
#include "testlib/test_pki.h"

namespace tw::it {
namespace {

using testing::Process;
using testing::run_to_completion;

constexpr int kWaitMs = 5'000;  // a safety net, never a performance bound
const std::string kPub = "/usr/bin/mosquitto_pub";
const std::string kSub = "/usr/bin/mosquitto_sub";
const std::string kPython = "/usr/bin/python3";
const std::string kStdbuf = "/usr/bin/stdbuf";

class MqttInterop : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(access(kSub.c_str(), X_OK), 0) << "mosquitto-clients missing: run scripts/deps.sh";
    mqtt_port_ = testing::pick_free_port();
    BrokerOptions options;
    options.log_level = log_level();
    options.config_toml = broker_settings() + "[[listener]]\nprotocol = \"native\"\naddress = \"127.0.0.1:0\"\n"
                          "[[listener]]\nprotocol = \"mqtt\"\naddress = \"127.0.0.1:" +
                          std::to_string(mqtt_port_) + "\"\n" + mqtt_listener_tls();
    broker_ = std::make_unique<BrokerProcess>(options);
    ASSERT_TRUE(broker_->ready()) << broker_->err();
  }

  // Top-level settings (before the listener tables), if any.
  virtual std::string broker_settings() { return {}; }
  virtual std::string log_level() { return "warn"; }
  // The MQTT listener's TLS keys, if any; the clients' matching options.
  virtual std::string mqtt_listener_tls() { return {}; }
  virtual std::vector<std::string> client_tls() const { return {}; }

  std::vector<std::string> with_port(std::vector<std::string> args) const {
    args.insert(args.begin(), {"-h", "127.0.0.1", "-p", std::to_string(mqtt_port_)});
    for (const std::string& arg : client_tls()) args.push_back(arg);
    return args;
  }
  // A mosquitto_sub that has its SUBACK (-d prints it): what it prints follows the subscription.
  std::unique_ptr<Process> subscriber(std::vector<std::string> args) const {
    args.insert(args.end(), {"-d", "-W", "10"});
    args = with_port(std::move(args));
    args.insert(args.begin(), {"-oL", kSub});  // line-buffered: SUBACK shows when it comes
    auto sub = std::make_unique<Process>(kStdbuf, args);
    EXPECT_TRUE(sub->wait_for_out("SUBACK", kWaitMs)) << sub->out() << sub->err();
    return sub;
  }
  testing::RunResult publish(std::vector<std::string> args) const {
    return run_to_completion(kPub, with_port(std::move(args)), kWaitMs);
  }
  testing::RunResult python(std::vector<std::string> args, int limit_ms = 2 * kWaitMs) const {
    args.insert(args.begin(), TW_IT21_CLIENTS);
    args.push_back(std::to_string(mqtt_port_));
    return run_to_completion(kPython, args, limit_ms);
  }

  uint16_t mqtt_port_ = 0;
  std::unique_ptr<BrokerProcess> broker_;
};

TEST_F(MqttInterop, NativeFieldListsReachMqttAsJsonAndMqttReachesNative) {
  auto sub = subscriber({"-t", "it21/eq/#", "-C", "1", "-F", "%r %t %p", "-V", "5"});
  RawClient native;
  ASSERT_TRUE(open_client(native, broker_->port(), "it21-native"));
  ASSERT_TRUE(native.register_topic(1, wire::PayloadKind::FieldList, "it21/eq/IBM"));
  fields::Decimal bid;
  ASSERT_TRUE(fields::Decimal::parse("189.25", bid));
  ASSERT_TRUE(native.publish(1, testing::field_list({{22, bid}, {30, int64_t{500}}}), true));
  ASSERT_TRUE(sub->wait(kWaitMs).has_value()) << sub->out();
  // The shape of `tickwire sub --json`: decimals as exact strings, ints as numbers.
  EXPECT_NE(sub->out().find("0 it21/eq/IBM {\"type\":\"image\",\"topic\":\"it21/eq/IBM\""), std::string::npos)
      << sub->out();
  EXPECT_NE(sub->out().find("\"fields\":{\"BID\":\"189.25\",\"BIDSIZE\":500}}"), std::string::npos) << sub->out();

  ASSERT_TRUE(publish({"-t", "it21/mq/x", "-m", "from mqtt", "-q", "1"}).status.clean());
  EXPECT_EQ(subscribe_for_image(native, 2, "it21/mq/x", kWaitMs), "from mqtt");
}

// Retained messages per the specification (docs/mqtt.md, "Retained
// messages"): RETAIN 0 neither stores nor replaces one [MQTT-3.3.1-12], a
// zero-byte retained PUBLISH clears it, and a native field list's last value
// is a new MQTT subscriber's retained message. The watcher's copy of each
// message says the broker applied it before a later subscriber asks (a
// tiered broker's PUBACK does not); each later subscriber leaves when done,
// so the next asks the channel's owner again.
TEST_F(MqttInterop, OnlyARetainedPublishIsRetainedAndAnEmptyOneClearsIt) {
  auto watcher = subscriber({"-t", "it21/r/#", "-F", "%r %t %p"});
  ASSERT_TRUE(publish({"-t", "it21/r/a", "-m", "v1", "-r"}).status.clean());
  ASSERT_TRUE(watcher->wait_for_out("0 it21/r/a v1\n", kWaitMs)) << watcher->out();
  ASSERT_TRUE(publish({"-t", "it21/r/a", "-m", "v2"}).status.clean());
  ASSERT_TRUE(publish({"-t", "it21/r/b", "-m", "never retained"}).status.clean());
  ASSERT_TRUE(watcher->wait_for_out("0 it21/r/b never retained\n", kWaitMs)) << watcher->out();
  auto first = subscriber({"-t", "it21/r/#", "-t", "it21/fence", "-C", "2", "-F", "%r %t %p"});
  ASSERT_TRUE(publish({"-t", "it21/fence", "-m", "f1"}).status.clean());
  ASSERT_TRUE(first->wait(kWaitMs).has_value()) << first->out();
  // v1 stays retained; v2 and b were published with RETAIN 0.
  const size_t kept = first->out().find("1 it21/r/a v1\n");
  EXPECT_NE(kept, std::string::npos) << first->out();
  EXPECT_GT(first->out().find("0 it21/fence f1\n"), kept) << first->out();

  ASSERT_TRUE(publish({"-t", "it21/r/a", "-n", "-r"}).status.clean());
  ASSERT_TRUE(watcher->wait_for_out("0 it21/r/a \n", kWaitMs)) << watcher->out();
  // Nothing retained is left: the first message a new subscriber sees is the fence.
  auto second = subscriber({"-t", "it21/r/#", "-t", "it21/fence", "-C", "1", "-F", "%r %t %p"});
  ASSERT_TRUE(publish({"-t", "it21/fence", "-m", "f2"}).status.clean());
  ASSERT_TRUE(second->wait(kWaitMs).has_value()) << second->out();
  EXPECT_NE(second->out().find("0 it21/fence f2"), std::string::npos) << second->out();
  EXPECT_EQ(second->out().find("it21/r/a"), std::string::npos) << second->out();

  // Market data: a native field list's last value is the retained message.
  RawClient native;
  ASSERT_TRUE(open_client(native, broker_->port(), "it21-retained-native"));
  ASSERT_TRUE(native.register_topic(1, wire::PayloadKind::FieldList, "it21/eq/MSFT"));
  ASSERT_TRUE(native.publish(1, testing::field_list({{30, int64_t{700}}}), true));
  ASSERT_TRUE(subscribe_for_image(native, 2, "it21/eq/MSFT", kWaitMs).has_value());  // the owner has it
  auto market = subscriber({"-t", "it21/eq/MSFT", "-C", "1", "-F", "%r %t %p"});
  ASSERT_TRUE(market->wait(kWaitMs).has_value()) << market->out();
  EXPECT_NE(market->out().find("1 it21/eq/MSFT {\"type\":\"image\""), std::string::npos) << market->out();
  EXPECT_NE(market->out().find("\"BIDSIZE\":700"), std::string::npos) << market->out();
}

// The same with paho, 3.1.1 and 5: a RETAIN 0 message with properties
// replaces neither the retained payload nor its properties.
TEST_F(MqttInterop, PahoSeesOnlyRetainedPublishesRetainedIn311And5) {
  auto run = python({"retain"});
  EXPECT_TRUE(run.status.clean()) << run.out << run.err;
  EXPECT_NE(run.out.find("ok retain"), std::string::npos) << run.out << run.err;
}

// MQTT's empty topic levels ("/a", "a//b"; the Paho suites' "/TopicA") are
// the broker's "∅" levels (docs/mqtt.md, "Mapping"): MQTT clients see their
// topic as they wrote it, native ones the broker's form.
TEST_F(MqttInterop, TopicsWithEmptyLevelsGoBothWays) {
  auto sub = subscriber({"-t", "/it21/e//#", "-C", "1", "-F", "%t %p"});
  ASSERT_TRUE(publish({"-t", "/it21/e//x", "-m", "empty levels", "-q", "1"}).status.clean());
  ASSERT_TRUE(sub->wait(kWaitMs).has_value()) << sub->out();
  EXPECT_NE(sub->out().find("/it21/e//x empty levels"), std::string::npos) << sub->out();
  RawClient native;
  ASSERT_TRUE(open_client(native, broker_->port(), "it21-empty-levels"));
  EXPECT_EQ(subscribe_for_image(native, 2, "\u2205/it21/e/\u2205/x", kWaitMs), "empty levels");
}

TEST_F(MqttInterop, AnAbruptDisconnectPublishesTheWill) {
  auto watcher = subscriber({"-t", "it21/will", "-C", "1", "-F", "%t %p"});
  auto doomed = subscriber({"-t", "it21/nothing", "--will-topic", "it21/will", "--will-payload", "gone", "-V", "5"});
  doomed->send_signal(SIGKILL);  // no DISCONNECT: the kernel just closes the socket
  ASSERT_TRUE(watcher->wait(kWaitMs).has_value()) << watcher->out();
  EXPECT_NE(watcher->out().find("it21/will gone"), std::string::npos) << watcher->out();
}

// MQTT 5 Will Delay Interval (3.1.3.2.2): the Will waits for its delay
// (with its properties), is never published when the session resumes within
// it (on whichever access point the new connection lands, in thread tiers),
// and goes at once when a Clean Start 1 connection ends the session. The
// client's clock bounds the wait from below only (the delay), never above.
TEST_F(MqttInterop, AWillWaitsForItsDelayAndAResumedSessionCancelsIt) {
  auto run = python({"will-delay"}, 6 * kWaitMs);  // 1 s and 3 s of waiting in it, on a loaded machine
  EXPECT_TRUE(run.status.clean()) << run.out << run.err;
  EXPECT_NE(run.out.find("ok will-delay"), std::string::npos) << run.out << run.err;
}

// A resumed session (docs/mqtt.md, "Sessions"): what was published while it
// was away comes as each channel's last value; what it already had does not
// come again, neither as a retained message (only a new subscription gets
// those, [MQTT-3.3.1-6]) nor as a last value (the Paho suites'
// test_redelivery_on_reconnect and test_offline_message_queueing).
TEST_F(MqttInterop, AResumedSessionGetsOnlyWhatWasPublishedWhileItWasAway) {
  auto run = python({"catch-up"});
  EXPECT_TRUE(run.status.clean()) << run.out << run.err;
  EXPECT_NE(run.out.find("ok catch-up"), std::string::npos) << run.out << run.err;
}

TEST_F(MqttInterop, PahoQos1AndQos2FlowsIn311And5) {
  for (std::string version : {"311", "5"}) {
    auto run = python({"paho", version});
    EXPECT_TRUE(run.status.clean()) << run.out << run.err;
    EXPECT_NE(run.out.find("ok paho " + version), std::string::npos) << run.out << run.err;
  }
  auto raw = python({"qos2"});
  EXPECT_TRUE(raw.status.clean()) << raw.out << raw.err;
}

TEST_F(MqttInterop, ACleanSession0SessionIsResumedWithItsSubscription) {
  auto run = python({"resume"});
  EXPECT_TRUE(run.status.clean()) << run.out << run.err;
  EXPECT_NE(run.out.find("ok resume"), std::string::npos) << run.out << run.err;
}

// MQTT 5 message properties (docs/mqtt.md, "Message properties"), paho to
// paho: live to MQTT 5 (and the message alone to 3.1.1), with the retained
// message and its expiry less the seconds it waited, and a native
// subscriber's frames unchanged.
TEST_F(MqttInterop, Mqtt5PropertiesReachMqtt5SubscribersLiveAndWithTheRetainedMessage) {
  auto run = python({"props"});
  EXPECT_TRUE(run.status.clean()) << run.out << run.err;
  EXPECT_NE(run.out.find("ok props"), std::string::npos) << run.out << run.err;
  RawClient native;
  ASSERT_TRUE(open_client(native, broker_->port(), "it21-props-native"));
  EXPECT_EQ(subscribe_for_image(native, 1, "it21/props/live", kWaitMs), "hello");
}

TEST_F(MqttInterop, ARequestGetsItsResponseOnItsResponseTopicWithItsCorrelationData) {
  auto run = python({"request"});
  EXPECT_TRUE(run.status.clean()) << run.out << run.err;
  EXPECT_NE(run.out.find("ok request"), std::string::npos) << run.out << run.err;
}

TEST_F(MqttInterop, ARetainedValueWhoseExpiryPassedIsNotSent) {
  auto run = python({"expired"});
  EXPECT_TRUE(run.status.clean()) << run.out << run.err;
  EXPECT_NE(run.out.find("ok expired"), std::string::npos) << run.out << run.err;
}

TEST_F(MqttInterop, SubscribingAgainResendsTheRetainedMessageUnlessRetainHandlingIs1) {
  auto run = python({"resubscribe"});
  EXPECT_TRUE(run.status.clean()) << run.out << run.err;
  EXPECT_NE(run.out.find("ok resubscribe"), std::string::npos) << run.out << run.err;
}

TEST_F(MqttInterop, AMalformedPacketDisconnectsThatClientAlone) {
  auto bystander = subscriber({"-t", "it21/ok", "-C", "1", "-F", "%t %p"});
  auto bad = python({"malformed"});
  EXPECT_TRUE(bad.status.clean()) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("disconnect 0x81"), std::string::npos) << bad.out;
  ASSERT_TRUE(publish({"-t", "it21/ok", "-m", "still here"}).status.clean());
  ASSERT_TRUE(bystander->wait(kWaitMs).has_value());
  EXPECT_NE(bystander->out().find("it21/ok still here"), std::string::npos) << bystander->out();
}

// The same listener with cert and key: MQTT over the TLS transport (mqtts).
class MqttInteropTls : public MqttInterop {
 protected:
  std::string mqtt_listener_tls() override {
    return "cert = \"" + pki_.server_cert() + "\"\nkey = \"" + pki_.server_key() + "\"\n";
  }
  std::vector<std::string> client_tls() const override { return {"--cafile", pki_.ca()}; }
  testing::TestPki pki_;
};

TEST_F(MqttInteropTls, MqttsCarriesTheSameSession) {
  auto sub = subscriber({"-t", "it21/tls", "-C", "1", "-F", "%t %p", "-V", "5"});
  ASSERT_TRUE(publish({"-t", "it21/tls", "-m", "over tls", "-q", "2"}).status.clean());
  ASSERT_TRUE(sub->wait(kWaitMs).has_value()) << sub->out();
  EXPECT_NE(sub->out().find("it21/tls over tls"), std::string::npos) << sub->out();
}

// mqtt_max_keepalive_s: an MQTT 5 client asking for a longer keep-alive (or
// none) is told the broker's in CONNACK, Server Keep Alive (3.2.2.3.14).
class MqttInteropKeepAlive : public MqttInterop {
 protected:
  std::string broker_settings() override { return "mqtt_max_keepalive_s = 60\n"; }
};

TEST_F(MqttInteropKeepAlive, AKeepAliveAboveTheCapIsAnsweredWithServerKeepAlive) {
  auto run = python({"server-keepalive"});
  EXPECT_TRUE(run.status.clean()) << run.out << run.err;
  EXPECT_NE(run.out.find("ok server-keepalive"), std::string::npos) << run.out << run.err;
}

// Users and entitlements (docs/security.md) apply to MQTT clients as to
// native ones: CONNECT's user name and password are checked off the loop,
// and a wildcard subscriber receives only the topics it is entitled to.
class MqttInteropAuth : public MqttInterop {
 protected:
  std::string broker_settings() override {
    auto hash = [](const std::string& pw) { return *auth::hash_password(pw, auth::HashCost{1, 1024, 1}); };
    std::string users = "[users.writer]\npassword = \"" + hash("writer-pw") + "\"\n"
                        "[[users.writer.rule]]\nallow = [\"publish\"]\ntopics = [\"it21/>\"]\n"
                        "[users.reader]\npassword = \"" + hash("reader-pw") + "\"\n"
                        "[[users.reader.rule]]\nallow = [\"subscribe\"]\ntopics = [\"it21/ok/>\"]\n";
    return "auth_file = \"" + dir_.write("users.toml", users) + "\"\nauth_failure_delay_ms = 50\n";
  }
  testing::TempDir dir_;
};

TEST_F(MqttInteropAuth, CredentialsAreCheckedAndAWildcardGetsOnlyEntitledTopics) {
  auto nobody = run_to_completion(kSub, with_port({"-t", "it21/#", "-C", "1", "-W", "5", "-V", "5"}), kWaitMs);
  EXPECT_FALSE(nobody.status.clean()) << "no credentials, no anonymous rules: refused";
  auto wrong = run_to_completion(kSub, with_port({"-t", "it21/#", "-C", "1", "-W", "5", "-u", "reader", "-P", "nope"}),
                                 kWaitMs);
  EXPECT_FALSE(wrong.status.clean()) << wrong.out << wrong.err;

  auto reader = subscriber({"-t", "it21/#", "-C", "1", "-F", "%t %p", "-V", "5", "-u", "reader", "-P", "reader-pw"});
  ASSERT_TRUE(publish({"-t", "it21/no/x", "-m", "secret", "-u", "writer", "-P", "writer-pw"}).status.clean());
  ASSERT_TRUE(publish({"-t", "it21/ok/x", "-m", "public", "-u", "writer", "-P", "writer-pw"}).status.clean());
  ASSERT_TRUE(reader->wait(kWaitMs).has_value()) << reader->out();
  EXPECT_NE(reader->out().find("it21/ok/x public"), std::string::npos) << reader->out();
  EXPECT_EQ(reader->out().find("secret"), std::string::npos) << reader->out();
}

// A session is its user's (docs/mqtt.md, "Client identifier"), and what it
// resends, its shared groups and its Will answer to the users file in force.
// `feed` publishes and subscribes it21/>; `alice` may receive it21/sec/> live
// until the reload, then it21/sec/z live and it21/sec/y delayed only; `bob`
// may receive it21/other/> and it21/sh/0; `doomed` has a Will on it21/will/,
// and is gone after the reload; anonymous connections may receive it21/anon/>.
class MqttInteropUsers : public MqttInterop {
 protected:
  std::string broker_settings() override {
    users_ = dir_.write("users.toml", users(false));
    return "auth_file = \"" + users_ + "\"\nallow_anonymous = true\nauth_failure_delay_ms = 50\n";
  }
  std::string log_level() override { return "info"; }  // "reloaded" says when a SIGHUP took effect

  static std::string users(bool reloaded) {
    auto hash = [](const std::string& pw) { return *auth::hash_password(pw, auth::HashCost{1, 1024, 1}); };
    auto user = [&](const std::string& name) { return "[users." + name + "]\npassword = \"" + hash(name + "-pw") + "\"\n"; };
    auto rule = [](const std::string& name, const std::string& allow, const std::string& topics,
                   const std::string& extra = "") {
      return "[[" + name + ".rule]]\nallow = [" + allow + "]\ntopics = [" + topics + "]\n" + extra;
    };
    std::string t = user("feed") + rule("users.feed", "\"publish\", \"subscribe\"", "\"it21/>\"");
    t += user("alice");
    if (!reloaded) {
      t += rule("users.alice", "\"subscribe\"", "\"it21/sec/>\"");
    } else {
      t += rule("users.alice", "\"subscribe\"", "\"it21/sec/z\"");
      t += rule("users.alice", "\"subscribe-delayed\"", "\"it21/sec/y\"", "delay_s = 1\n");
    }
    t += user("bob") + rule("users.bob", "\"subscribe\"", "\"it21/other/>\", \"it21/sh/0\"");
    if (!reloaded) t += user("doomed") + rule("users.doomed", "\"publish\"", "\"it21/will/>\"");
    t += "[anonymous]\n" + rule("anonymous", "\"subscribe\"", "\"it21/anon/>\"");
    return t;
  }
  // Rewrites the users file as after the reload, sends SIGHUP and waits for the broker to say it reloaded.
  void reload() {
    dir_.write("users.toml", users(true));
    broker_->send_signal(SIGHUP);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    while (broker_->err().find("reloaded") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_NE(broker_->err().find("reloaded"), std::string::npos) << broker_->err();
  }
  std::unique_ptr<Process> python_async(std::vector<std::string> args) const {
    args.insert(args.begin(), TW_IT21_CLIENTS);
    args.push_back(std::to_string(mqtt_port_));
    return std::make_unique<Process>(kPython, args);
  }

  testing::TempDir dir_;
  std::string users_;
};

// Issue 25, item 1: another user (and anonymous) with the victim's client id
// and Clean Start 0 gets a session of its own, nothing of the victim's, and
// does not kick the victim off; the victim's session is still hers.
TEST_F(MqttInteropUsers, AnotherUserWithTheSameClientIdGetsItsOwnSessionAndNothingOfTheVictims) {
  auto run = python({"hijack"});
  EXPECT_TRUE(run.status.clean()) << run.out << run.err;
  EXPECT_NE(run.out.find("ok hijack"), std::string::npos) << run.out << run.err;
}

// Issue 25, item 1: a resumed session's stored messages are checked against
// the user's rights at the resume: a reload between the disconnect and the
// resume revoked one topic and left another delayed only; they are not
// resent, the third is.
TEST_F(MqttInteropUsers, AResumedSessionResendsOnlyWhatTheUserMayStillReceiveLive) {
  auto store = python({"revoked-store"});
  ASSERT_TRUE(store.status.clean()) << store.out << store.err;
  ASSERT_NE(store.out.find("ok revoked-store"), std::string::npos) << store.out << store.err;
  reload();
  auto resume = python({"revoked-resume"});
  EXPECT_TRUE(resume.status.clean()) << resume.out << resume.err;
  EXPECT_NE(resume.out.find("ok revoked-resume"), std::string::npos) << resume.out << resume.err;
}

// Issue 25, item 7: shared groups are per user: a narrow user in a group of
// the same name as a wider user's loses the wider user no message.
TEST_F(MqttInteropUsers, SharedGroupsOfTheSameNameAreOnePerUser) {
  auto run = python({"shared-users"});
  EXPECT_TRUE(run.status.clean()) << run.out << run.err;
  EXPECT_NE(run.out.find("ok shared-users"), std::string::npos) << run.out << run.err;
}

// Issue 25, item 8: a reload that removes a user closes its connection
// without publishing its Will.
TEST_F(MqttInteropUsers, AUserRemovedByAReloadHasNoWillPublished) {
  auto client = python_async({"will", "removed"});
  ASSERT_TRUE(client->wait_for_out("ready", 2 * kWaitMs)) << client->out() << client->err();
  reload();
  auto status = client->wait(4 * kWaitMs);
  ASSERT_TRUE(status.has_value()) << client->out() << client->err();
  EXPECT_TRUE(status->clean()) << client->out() << client->err();
  EXPECT_NE(client->out().find("ok will removed"), std::string::npos) << client->out() << client->err();
}

// The control case: a connection that drops without a reload has its Will published.
TEST_F(MqttInteropUsers, AConnectionThatDropsStillHasItsWillPublished) {
  auto run = python({"will", "dropped"});
  EXPECT_TRUE(run.status.clean()) << run.out << run.err;
  EXPECT_NE(run.out.find("ok will dropped"), std::string::npos) << run.out << run.err;
}

}  // namespace
}  // namespace tw::it
