// Conflated subscriptions through the client library against a real broker:
// subscribe(pattern, handler, policy, conflate_ms) delivers merged IMAGEs
// instead of every UPDATE, and the interval is re-sent after a reconnect.
#include "test_broker.h"

namespace tw::client::testing {
namespace {

constexpr int kUpdates = 20;

size_t count_kind(const std::vector<Received>& got, MessageKind kind) {
  size_t n = 0;
  for (const Received& r : got) n += r.kind == kind;
  return n;
}

// Publishes kUpdates updates; the last carries `last_value`.
void publish_updates(Client& pub, PublisherId id, int64_t last_value) {
  for (int i = kUpdates - 1; i >= 0; --i) ASSERT_TRUE(pub.publish(id, decimal_field(22, last_value - i, 0)).ok());
  confirm_published(pub, "C/A");
}

TEST(Conflation, ConflatedSubscriptionGetsMergedImagesAndKeepsItAcrossAReconnect) {
  auto broker = std::make_unique<TestBroker>();
  const uint16_t port = broker->port();
  Client pub;
  Client sub;
  ASSERT_TRUE(pub.connect(options_for(port, "pub")).ok());
  ASSERT_TRUE(sub.connect(options_for(port, "screen")).ok());
  auto id = pub.advertise("C/A", wire::PayloadKind::FieldList);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(pub.publish(*id, decimal_field(22, 0, 0), true).ok());
  confirm_published(pub, "C/A");

  std::vector<Received> got;
  ASSERT_TRUE(sub.subscribe("C/>", recorder(got), wire::SlowPolicy::Default, 100).ok());
  ASSERT_TRUE(poll_until(sub, [&] { return got.size() == 1; }));
  publish_updates(pub, *id, 100);
  ASSERT_TRUE(poll_until(sub, [&] { return !got.empty() && got.back().seq == 1u + kUpdates; }));
  EXPECT_EQ(count_kind(got, MessageKind::Update), 0u) << "a conflated stream carries merged images only";
  EXPECT_EQ(got.back().kind, MessageKind::Image);
  EXPECT_EQ(got.back().payload, decimal_field(22, 100, 0));
  // How many refreshes arrive depends on timing; at most one per interval is
  // checked with an injected clock in tests/broker/session_conflation_test.cc.

  broker.reset();
  ASSERT_TRUE(poll_until(sub, [&] { return !sub.connected(); }));
  ASSERT_TRUE(poll_until(pub, [&] { return !pub.connected(); }));
  broker = std::make_unique<TestBroker>(port);
  ASSERT_TRUE(poll_until(sub, [&] { return sub.connected(); }));
  ASSERT_TRUE(poll_until(pub, [&] { return pub.connected(); }));

  got.clear();
  ASSERT_TRUE(pub.publish(*id, decimal_field(22, 0, 0), true).ok());
  confirm_published(pub, "C/A");
  ASSERT_TRUE(poll_until(sub, [&] { return got.size() == 1; }));
  publish_updates(pub, *id, 200);
  ASSERT_TRUE(poll_until(sub, [&] { return !got.empty() && got.back().seq == 1u + kUpdates; }));
  EXPECT_EQ(count_kind(got, MessageKind::Update), 0u) << "the interval was re-sent after the reconnect";
  EXPECT_EQ(got.back().payload, decimal_field(22, 200, 0));
}

}  // namespace
}  // namespace tw::client::testing
