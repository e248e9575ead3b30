// Broker::totals: every loop's last published snapshot, added up, with each
// message counted once whatever the thread shape (docs/ARCHITECTURE.md,
// "Threads"). Read after the broker stopped: the loops publish once more as
// they end, so the totals are exact.
#include "test_broker.h"

namespace tw::client::testing {
namespace {

struct Shape {
  uint32_t gateways, access_points;
};

class BrokerTotals : public ::testing::TestWithParam<Shape> {
 protected:
  config::BrokerConfig config() const {
    config::BrokerConfig c;
    c.gateways = GetParam().gateways;
    c.access_points = GetParam().access_points;
    return c;
  }
};

TEST_P(BrokerTotals, CountEachConnectionPublishAndDeliveryOnce) {
  TestBroker broker(config(), 0);
  Client pub, sub;
  ASSERT_TRUE(pub.connect(options_for(broker.port(), "pub")).ok());
  ASSERT_TRUE(sub.connect(options_for(broker.port(), "sub")).ok());
  auto id = pub.advertise("T/EQ/A", wire::PayloadKind::FieldList);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(pub.publish(*id, decimal_field(22, 100, -2), true).ok());
  confirm_published(pub, "T/EQ/A");
  std::vector<Received> got;
  ASSERT_TRUE(sub.subscribe("T/EQ/A", recorder(got)).ok());
  ASSERT_TRUE(poll_until(sub, [&] { return got.size() == 1; }));  // the image: not a delivery
  ASSERT_TRUE(pub.publish(*id, decimal_field(22, 101, -2)).ok());
  ASSERT_TRUE(pub.publish(*id, decimal_field(22, 102, -2)).ok());
  ASSERT_TRUE(pub.flush().ok());
  ASSERT_TRUE(poll_until(sub, [&] { return got.size() == 3; }));
  pub.close();
  sub.close();
  broker.stop();

  const tier::LoopSnapshot& total = broker.final_totals();
  EXPECT_EQ(total.counters.connections_accepted, 2u);
  EXPECT_EQ(total.router.publishes, 3u);
  EXPECT_EQ(total.router.deliveries, 2u);  // the updates, to the one subscriber
  EXPECT_GT(total.loop.turns, 0u);
}

INSTANTIATE_TEST_SUITE_P(Shapes, BrokerTotals, ::testing::Values(Shape{0, 0}, Shape{1, 1}, Shape{2, 2}),
                         [](const auto& info) {
                           return "threads_" + std::to_string(info.param.gateways) + "_" +
                                  std::to_string(info.param.access_points);
                         });

}  // namespace
}  // namespace tw::client::testing
