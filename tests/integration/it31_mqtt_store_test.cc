// MQTT stored sessions on the store (docs/mqtt.md, "Sessions"): with
// `store.dir`, a session that outlives its connection outlives the broker
// too. python3-paho-mqtt clients (it31_mqtt_store_clients.py) against real
// tickwired processes restarted on the same store and MQTT port.
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "integration/it_support.h"
#include "testlib/process.h"

namespace tw::it {
namespace {

using testing::run_to_completion;
using testing::TempDir;

constexpr int kClientMs = 30'000;  // a safety net for one client run, never a performance bound

class It31MqttStore : public ::testing::Test {
 protected:
  void SetUp() override { mqtt_port_ = testing::pick_free_port(); }

  void start(const std::string& log_level = "warn", const std::string& queues = "") {
    const std::string toml =
        "[store]\ndir = \"" + store_.path() + "/s\"\n" + native_and_mqtt_listeners(mqtt_port_) + queues;
    broker_ = std::make_unique<BrokerProcess>(BrokerOptions{.config_toml = toml, .log_level = log_level});
    ASSERT_TRUE(broker_->ready()) << broker_->err();
  }
  // SIGKILL: nothing written at shutdown; SIGTERM: an orderly stop.
  void restart(int signal, const std::string& log_level = "warn") {
    broker_->send_signal(signal);
    ASSERT_TRUE(broker_->wait(10'000).has_value());
    start(log_level);
  }
  void client(std::vector<std::string> args) {
    args.insert(args.begin(), TW_IT31_CLIENTS);
    args.insert(args.begin() + 2, std::to_string(mqtt_port_));
    const auto result = run_to_completion("/usr/bin/python3", args, kClientMs);
    EXPECT_TRUE(result.status.clean()) << args[1] << ": " << result.out << result.err;
  }

  TempDir store_;
  uint16_t mqtt_port_ = 0;
  std::unique_ptr<BrokerProcess> broker_;
};

TEST_F(It31MqttStore, AStoredSessionSurvivesSigkillAndSigterm) {
  start();
  client({"leave", "it31-v3", "311", "0"});
  client({"leave", "it31-v5", "5", "3600"});
  restart(SIGKILL);
  client({"resume", "it31-v3", "311", "0"});
  client({"resume", "it31-v5", "5", "3600"});
  // Both connected and gone again: the files say so, and an orderly stop keeps them.
  restart(SIGTERM);
  client({"resume", "it31-v3", "311", "0"});
  client({"resume", "it31-v5", "5", "3600"});
}

TEST_F(It31MqttStore, AnExpiredSessionIsGoneAfterRestartAndACorruptFileIsSetAside) {
  start();
  client({"leave", "it31-brief", "5", "1"});
  client({"leave", "it31-kept", "5", "3600"});
  broker_->stop();
  {
    std::ofstream junk(store_.path() + "/s/mqtt-sessions/00000000000000aa", std::ios::binary);
    junk << "TWMS torn";
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1'100));  // past it31-brief's 1 s Session Expiry
  start("info");
  client({"absent", "it31-brief"});
  client({"resume", "it31-kept", "5", "3600"});
  broker_->stop();
  EXPECT_NE(broker_->err().find("00000000000000aa refused: not a session file"), std::string::npos) << broker_->err();
  EXPECT_NE(broker_->err().find("1 stored session recovered"), std::string::npos) << broker_->err();
  // it31-brief expired at the restart, or before it (the store thread deletes an expired session's queue and
  // file within a second): either way nothing of it is left; it31-kept's file and queue are.
  EXPECT_NE(broker_->err().find("1 refused)"), std::string::npos) << broker_->err();
  size_t files = 0, queues = 0;
  for (const auto& entry : std::filesystem::directory_iterator(store_.path() + "/s/mqtt-sessions")) {
    const std::string name = entry.path().filename().string();
    files += name.size() == 16;
    queues += entry.path().extension() == ".q";
  }
  EXPECT_EQ(files, 1u);
  EXPECT_EQ(queues, 1u);
}

// Acceptance 3 of issue 28: a QoS 1 subscriber with a stored session misses
// nothing published while it was away, across a SIGKILL and a SIGTERM of the
// broker: every message, in order, none twice.
TEST_F(It31MqttStore, AnAwayQos1SessionGetsEverythingPublishedAcrossRestartsInOrder) {
  start();
  client({"leave", "it31-q1", "311", "0", "1"});
  client({"publish", "it31-q1", "1", "1", "10"});
  restart(SIGKILL);
  client({"publish", "it31-q1", "1", "11", "20"});
  restart(SIGTERM);
  client({"publish", "it31-q1", "1", "21", "30"});
  client({"collect", "it31-q1", "311", "0", "1-30"});
}

// QoS 2: the same, and never a duplicate, also for the messages the session
// had been sent live before it left (MQTT 5, Session Expiry 1 h).
TEST_F(It31MqttStore, AnAwayQos2SessionGetsEachMessageExactlyOnce) {
  start();
  client({"leave", "it31-q2", "5", "3600", "2"});
  client({"publish", "it31-q2", "2", "1", "10"});
  restart(SIGKILL);
  client({"publish", "it31-q2", "2", "11", "20"});
  client({"collect", "it31-q2", "5", "3600", "1-20"});
  client({"publish", "it31-q2", "2", "21", "25"});
  client({"collect", "it31-q2", "5", "3600", "21-25"});
}

// Message Expiry (MQTT 5): a queued message whose interval passed while it
// waited is not delivered; the one delivered carries what is left of its own.
TEST_F(It31MqttStore, AQueuedMessageExpiresAndTheOtherCarriesItsRemainingInterval) {
  start();
  client({"leave", "it31-exp", "5", "3600", "1"});
  client({"publish", "it31-exp", "1", "1", "1", "60"});
  client({"publish", "it31-exp", "1", "2", "2", "1"});
  client({"publish", "it31-exp", "1", "3", "3", "60"});
  std::this_thread::sleep_for(std::chrono::milliseconds(1'100));  // past message 2's 1 s, not the others' 60 s
  client({"collect", "it31-exp", "5", "3600", "1,3"});
}

// An MQTT publisher's QoS 1 and 2 messages go to the durable queues that
// attract them, acknowledged once stored; a full queue refuses: MQTT 5 with
// PUBACK 0x97, 3.1.1 (no reason codes) by closing the connection.
TEST_F(It31MqttStore, QueuesTakeMqttPublishesAndAFullOneRefusesThem) {
  start("warn",
        "[[queue]]\nname = \"mq\"\nsubscriptions = [\"it31/q/>\"]\n"
        "[[queue]]\nname = \"full\"\nsubscriptions = [\"it31/full/>\"]\nmax_messages = 1\n");
  client({"to-queue"});
  client({"full"});
  auto consumed = run_to_completion(testing::bin_path("tickwire"),
                                    {"-s", "127.0.0.1:" + std::to_string(broker_->port()), "consume", "mq", "-n", "2",
                                     "--timeout-ms", "5000"});
  ASSERT_EQ(consumed.status.code, 0) << consumed.err;
  EXPECT_NE(consumed.out.find("mq seq=1 it31/q/1 one\n"), std::string::npos) << consumed.out;
  EXPECT_NE(consumed.out.find("mq seq=2 it31/q/2 two\n"), std::string::npos) << consumed.out;
}

}  // namespace
}  // namespace tw::it
