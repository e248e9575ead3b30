// Reconnection against a real broker restarted on the same port.
#include "test_broker.h"

namespace tw::client::testing {
namespace {

TEST(Reconnect, ResubscribesAndReregistersAfterBrokerRestart) {
  auto broker = std::make_unique<TestBroker>();
  uint16_t port = broker->port();
  Client pub;
  Client sub;
  std::vector<std::pair<ConnectionEvent, std::string>> sub_events;
  sub.on_connection([&](ConnectionEvent e, std::string_view why) { sub_events.emplace_back(e, std::string(why)); });
  bool pub_reconnected = false;
  pub.on_connection([&](ConnectionEvent e, std::string_view) { pub_reconnected |= e == ConnectionEvent::Reconnected; });
  ASSERT_TRUE(pub.connect(options_for(port, "pub")).ok());
  ASSERT_TRUE(sub.connect(options_for(port, "sub")).ok());

  std::vector<Received> got;
  ASSERT_TRUE(sub.subscribe("R/>", recorder(got)).ok());
  auto id = pub.advertise("R/A", wire::PayloadKind::FieldList);
  ASSERT_TRUE(pub.publish(*id, decimal_field(22, 1, 0), true).ok());
  confirm_published(pub, "R/A");
  ASSERT_TRUE(poll_until(sub, [&] { return got.size() == 1; }));

  broker.reset();  // stop: both clients see EOF
  ASSERT_TRUE(poll_until(sub, [&] { return !sub.connected(); }));
  ASSERT_EQ(sub_events.back().first, ConnectionEvent::Disconnected);
  EXPECT_FALSE(sub_events.back().second.empty()) << "a disconnect carries its reason";
  ASSERT_TRUE(poll_until(pub, [&] { return !pub.connected(); }));
  EXPECT_FALSE(pub.publish(*id, decimal_field(22, 2, 0)).ok()) << "refused, not queued, while disconnected";
  EXPECT_EQ(pub.counters().publish_rejected, 1u);

  broker = std::make_unique<TestBroker>(port);
  ASSERT_EQ(broker->port(), port);
  ASSERT_TRUE(poll_until(sub, [&] { return sub.connected(); }));
  ASSERT_TRUE(poll_until(pub, [&] { return pub.connected(); }));
  EXPECT_EQ(sub_events.back().first, ConnectionEvent::Reconnected);
  EXPECT_TRUE(pub_reconnected);
  EXPECT_EQ(sub.counters().reconnects, 1u);

  // Same publish id as before: the REGISTER was replayed after WELCOME.
  ASSERT_TRUE(pub.publish(*id, decimal_field(22, 3, 0), true).ok());
  confirm_published(pub, "R/A");
  ASSERT_TRUE(poll_until(sub, [&] { return got.size() == 2; }));
  EXPECT_EQ(got[1].kind, MessageKind::Image);
  EXPECT_EQ(got[1].topic, "R/A");
  EXPECT_EQ(got[1].seq, 1u) << "a new broker, a new channel";
  EXPECT_EQ(got[1].payload, decimal_field(22, 3, 0));
  EXPECT_FALSE(got[1].gap);
  EXPECT_EQ(sub.counters().gaps, 0u) << "channel state was forgotten on reconnect";
}

TEST(Reconnect, CloseStopsReconnecting) {
  TestBroker broker;
  Client c;
  int events = 0;
  c.on_connection([&](ConnectionEvent, std::string_view) { ++events; });
  ASSERT_TRUE(c.connect(options_for(broker.port(), "c")).ok());
  c.close();
  EXPECT_FALSE(c.connected());
  EXPECT_EQ(c.poll(0), -1);
  EXPECT_EQ(events, 1) << "close() calls no callback";
}

TEST(Reconnect, DisabledMeansTheClientStaysDown) {
  auto broker = std::make_unique<TestBroker>();
  Client c;
  Options o = options_for(broker->port(), "c");
  o.reconnect = false;
  ASSERT_TRUE(c.connect(o).ok());
  broker.reset();
  ASSERT_TRUE(poll_until(c, [&] { return !c.connected(); }));
  EXPECT_EQ(c.poll(0), -1);
}

}  // namespace
}  // namespace tw::client::testing
