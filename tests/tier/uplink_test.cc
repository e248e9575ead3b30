// The uplink's side of a subscription's ACK (docs/ARCHITECTURE.md, "A
// subscription across the tiers"): which gateways it asks to Settle, and
// when a request has every answer. The gateways' rings are read by the test.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "tier/uplink.h"

namespace tw::tier {
namespace {

// An addressable connection that receives nothing here.
class Connection final : public broker::Outlet {
 public:
  explicit Connection(uint32_t t) { token = t; }
  void send_image(const cache::Channel&, uint32_t) override {}
  void send_delivery(const broker::Delivery&) override {}
  void flush_output() override {}
  std::string_view name() const override { return "connection"; }
};

class UplinkSettle : public ::testing::Test {
 protected:
  // The records waiting in gateway g's ring, as "Op pattern-or-id".
  std::vector<std::string> sent_to(uint32_t g) {
    std::vector<std::string> out;
    SpscRing& ring = (g == 0 ? link0_ : link1_).to_gateway.ring();
    for (auto bytes = ring.read(); !bytes.empty(); bytes = ring.read()) {
      Record r;
      EXPECT_TRUE(read_record(bytes, r));
      if (r.op == Op::Interest) out.push_back("interest " + std::string(r.a));
      if (r.op == Op::Settle) out.push_back("settle " + std::to_string(r.arg) + " after " + std::to_string(r.id));
    }
    ring.release();
    return out;
  }
  // Gateway g's answer to a Settle of `request_id` sent after `interests` Interest records.
  bool answer(uint32_t g, uint32_t request_id, uint32_t interests) {
    Record r{Op::Settled};
    r.token = connection_.token;
    r.arg = request_id;
    r.id = interests;
    return uplink_.settled(g, r);
  }
  bool settle(std::string_view pattern, uint32_t request_id) {
    return uplink_.settle(&connection_, {&pattern, 1}, request_id);
  }

  cache::ChannelDirectory directory_{2, 1000};
  Link link0_{1u << 16};
  Link link1_{1u << 16};
  Uplink uplink_{directory_, {&link0_, &link1_}, {nullptr, nullptr}};
  Connection connection_{7};
};

TEST_F(UplinkSettle, AWildcardWaitsForEveryGatewayThatHasItsInterestInFlight) {
  uplink_.interest("A/>", true);
  ASSERT_TRUE(settle("A/>", 1));
  // A second subscription while the first interest is in flight waits too.
  ASSERT_TRUE(settle("A/>", 2));
  for (uint32_t g = 0; g < 2; ++g) {
    EXPECT_EQ(sent_to(g), (std::vector<std::string>{"interest A/>", "settle 1 after 1", "settle 2 after 1"}));
  }
  EXPECT_FALSE(answer(0, 1, 1));
  EXPECT_TRUE(answer(1, 1, 1));
  EXPECT_FALSE(answer(0, 2, 1));
  EXPECT_TRUE(answer(1, 2, 1));
  // Both gateways applied every interest: the next subscription is answered at once.
  EXPECT_FALSE(settle("A/>", 3));
  EXPECT_TRUE(sent_to(0).empty());
}

TEST_F(UplinkSettle, AnExactTopicAsksOnlyItsOwnGateway) {
  const uint32_t owner = directory_.shard_of("B/1");
  uplink_.interest("B/1", true);
  ASSERT_TRUE(settle("B/1", 5));
  EXPECT_EQ(sent_to(owner), (std::vector<std::string>{"interest B/1", "settle 5 after 1"}));
  EXPECT_TRUE(sent_to(1 - owner).empty());
  EXPECT_TRUE(answer(owner, 5, 1));
  EXPECT_FALSE(settle("B/1", 6));
}

TEST_F(UplinkSettle, AConnectionThatGoesIsForgottenAndItsLateAnswerStillCounts) {
  uplink_.interest("C/>", true);
  ASSERT_TRUE(settle("C/>", 9));
  uplink_.outlet_gone(&connection_);
  EXPECT_FALSE(answer(0, 9, 1));
  EXPECT_FALSE(answer(1, 9, 1));
  EXPECT_FALSE(settle("C/>", 10)) << "the late answers said both gateways hold the interest";
}

}  // namespace
}  // namespace tw::tier
