// libtickwire against a real broker that restarts on the same port: the
// client reconnects, resubscribes and receives the new broker's data.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>

#include "tickwire/client/client.h"
#include "integration/it_support.h"
#include "testlib/fields.h"

namespace tw::it {
namespace {

using Clock = std::chrono::steady_clock;

struct Received {
  client::MessageKind kind;
  std::string topic;
  uint64_t seq;
  std::optional<int64_t> value;  // field 1
};

// Polls until `done` holds or the safety timeout passes.
bool poll_until(client::Client& c, const std::function<bool()>& done, int timeout_ms = testing::kDefaultTimeoutMs) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    c.poll(20);
  }
  return true;
}

// A raw publisher that sets field 1 of `topic` to `value` on `broker`.
void publish_value(RawClient& pub, const BrokerProcess& broker, const std::string& topic, int64_t value) {
  if (!pub.connected()) {
    std::string why;
    ASSERT_TRUE(open_client(pub, broker.port(), "raw-pub", &why)) << why;
    ASSERT_TRUE(pub.register_topic(1, wire::PayloadKind::FieldList, topic));
  }
  ASSERT_TRUE(pub.publish(1, int_payload(value)));
}

TEST(It08ClientReconnect, ResubscribesAfterTheBrokerRestartsOnTheSamePort) {
  uint16_t port = testing::pick_free_port();
  ASSERT_NE(port, 0);
  auto first = std::make_unique<BrokerProcess>(BrokerOptions{.port = port});
  ASSERT_TRUE(first->ready()) << first->err();

  client::Client c;
  std::vector<client::ConnectionEvent> events;
  std::vector<Received> got;
  c.on_connection([&](client::ConnectionEvent e, std::string_view) { events.push_back(e); });
  client::Options options;
  options.port = port;
  options.client_name = "it08";
  options.reconnect_min_ms = 50;
  options.reconnect_max_ms = 200;
  options.close_linger_ms = 0;
  auto connected = c.connect(options);
  ASSERT_TRUE(connected) << connected.error().message;
  auto sub = c.subscribe("RC/>", [&](const client::Message& m) {
    fields::FieldImage image;
    std::optional<int64_t> value;
    if (image.replace(m.payload)) value = testing::int_field(image, 1);
    got.push_back({m.kind, std::string(m.topic), m.seq, value});
  });
  ASSERT_TRUE(sub) << sub.error().message;

  RawClient pub;
  ASSERT_NO_FATAL_FAILURE(publish_value(pub, *first, "RC/T", 1));
  ASSERT_TRUE(poll_until(c, [&] { return !got.empty(); })) << "nothing received from the first broker";
  EXPECT_EQ(got.back().value, 1);

  // Restart: the first broker says goodbye, a second one takes the same port.
  pub.close();
  EXPECT_TRUE(first->stop().clean());
  first.reset();
  ASSERT_TRUE(poll_until(c, [&] { return !c.connected(); })) << "the client did not notice the broker going away";
  BrokerProcess second({.port = port});
  ASSERT_TRUE(second.ready()) << "cannot restart on port " << port << ": " << second.err();
  ASSERT_TRUE(poll_until(c, [&] { return c.connected(); })) << "the client did not reconnect";
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back(), client::ConnectionEvent::Reconnected);

  // The new broker's data reaches the resubscribed client: the image, then an update.
  size_t before = got.size();
  ASSERT_NO_FATAL_FAILURE(publish_value(pub, second, "RC/T", 2));
  ASSERT_NO_FATAL_FAILURE(publish_value(pub, second, "RC/T", 3));
  ASSERT_TRUE(poll_until(c, [&] { return !got.empty() && got.back().value == 3; }))
      << "no data from the restarted broker (" << got.size() - before << " messages)";
  EXPECT_EQ(got.back().topic, "RC/T");
  EXPECT_EQ(got.back().seq, 2u) << "the restarted broker's channel starts again at seq 1";
  EXPECT_EQ(got[before].kind, client::MessageKind::Image);
  c.close();
}

}  // namespace
}  // namespace tw::it
