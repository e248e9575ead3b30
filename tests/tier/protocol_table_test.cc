// The protocol table (tier/protocols.h): what it refuses, and a protocol that
// joins the broker through its entry alone (tests/tier/line_protocol: no
// edit anywhere else) doing a publish/subscribe round trip in each thread
// configuration.
#include <gtest/gtest.h>

#include <thread>

#include "base/log.h"
#include "testlib/blocking_socket.h"
#include "tier/broker.h"
#include "tier/line_protocol/line_protocol.h"

namespace tw::tier {
namespace {

constexpr uint8_t kFreeSlot = 4;  // native 0, MQTT 1 and 2, stream 3

TEST(Protocols, TheBuiltInTableSpeaksNativeMqttAndStream) {
  Protocols table = builtin_protocols();
  std::vector<std::string_view> names = table.names();
  EXPECT_EQ(names, (std::vector<std::string_view>{"native", "mqtt", "stream"}));
  EXPECT_TRUE(table.find("mqtt")->websocket.has_value());
  EXPECT_EQ(table.find("mqtt")->websocket->path, "/mqtt");
  EXPECT_FALSE(table.find("stream")->listens) << "the browser stream is spoken over WebSocket only";
  EXPECT_FALSE(table.find("native")->refusal.empty()) << "a refused native client is told why";
}

TEST(Protocols, ANameOrAnEncoderSlotIsTakenOnce) {
  Protocols table = builtin_protocols();
  Status same_name = table.add(testing::line_protocol(kFreeSlot));
  ASSERT_TRUE(same_name);
  EXPECT_FALSE(table.add(testing::line_protocol(kFreeSlot + 1)));
  Protocol other = testing::line_protocol(3);
  other.name = "other";
  Status taken = table.add(std::move(other));
  ASSERT_FALSE(taken);
  EXPECT_EQ(taken.error().message, "protocol 'other': encoder slot 3 is stream's");
  Protocol wide = testing::line_protocol(output::StreamEncoder::kSlots);
  wide.name = "wide";
  EXPECT_FALSE(table.add(std::move(wide)));
}

struct Threads {
  uint32_t gateways;
  uint32_t access_points;
};

class ProtocolTableBroker : public ::testing::TestWithParam<Threads> {
 protected:
  void SetUp() override {
    config::BrokerConfig config;
    config.gateways = GetParam().gateways;
    config.access_points = GetParam().access_points;
    config.log_level = log::Level::Warn;
    log::set_level(config.log_level);
    config::Listener line;
    line.protocol = "line";
    line.address = "127.0.0.1:0";
    config.listeners = {line};
    broker_ = std::make_unique<Broker>(config);
    ASSERT_TRUE(broker_->add_protocol(testing::line_protocol(kFreeSlot)));
    Status listening = broker_->listen();
    ASSERT_TRUE(listening) << listening.error().message;
    runner_ = std::thread([this] { broker_->run(); });
  }
  void TearDown() override {
    if (runner_.joinable()) {
      broker_->stop();
      runner_.join();
    }
  }
  std::unique_ptr<Broker> broker_;
  std::thread runner_;
};

TEST_P(ProtocolTableBroker, ATestProtocolPublishesAndSubscribesThroughTheBroker) {
  testing::BlockingSocket subscriber(broker_->port());
  ASSERT_TRUE(subscriber.connected());
  subscriber.send("SUB LINE/>\n");
  ASSERT_NE(subscriber.read_until("OK LINE/>\n").find("OK LINE/>\n"), std::string::npos) << subscriber.received();

  testing::BlockingSocket publisher(broker_->port());
  ASSERT_TRUE(publisher.connected());
  publisher.send("PUB LINE/a hello\n");
  EXPECT_NE(subscriber.read_until("IMAGE LINE/a 1 hello\n").find("IMAGE LINE/a 1 hello\n"), std::string::npos)
      << subscriber.received();
  publisher.send("PUB LINE/a world\n");
  EXPECT_NE(subscriber.read_until("UPDATE LINE/a 2 world\n").find("UPDATE LINE/a 2 world\n"), std::string::npos)
      << subscriber.received();

  // The last value, to a subscriber that comes later.
  testing::BlockingSocket late(broker_->port());
  late.send("SUB LINE/a\n");
  EXPECT_NE(late.read_until("IMAGE LINE/a 2 world\n").find("OK LINE/a\nIMAGE LINE/a 2 world\n"), std::string::npos)
      << late.received();
}

TEST(Protocols, AListenerOfAProtocolNotInTheTableIsRefused) {
  config::BrokerConfig config;
  config::Listener unknown;
  unknown.protocol = "nope";
  unknown.address = "127.0.0.1:0";
  config.listeners = {unknown};
  Broker other(config);
  Status listening = other.listen();
  ASSERT_FALSE(listening);
  EXPECT_EQ(listening.error().message, "listener 127.0.0.1:0: protocol 'nope' is not one of http, native, mqtt");
}

INSTANTIATE_TEST_SUITE_P(Threads, ProtocolTableBroker,
                         ::testing::Values(Threads{0, 0}, Threads{1, 1}, Threads{2, 2}),
                         [](const ::testing::TestParamInfo<Threads>& info) {
                           return "threads_" + std::to_string(info.param.gateways) + "_" +
                                  std::to_string(info.param.access_points);
                         });

}  // namespace
}  // namespace tw::tier
