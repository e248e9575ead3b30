// The seam between the router's parts (broker/channel_owner.h): what the
// subscriber side tells the channels' owner, and in which order. A third
// owner plugs in without touching the subscriber side: here one that records
// the Interest calls and leaves the channels to a real OwnedChannels.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "output/fanout.h"
#include "broker/owned_channels.h"
#include "broker/recording_outlet.h"
#include "broker/router.h"

namespace tw::broker {
namespace {

class RecordingOwner final : public ChannelOwner {
 public:
  RecordingOwner() : ChannelOwner(RouterLimits{}, [] { return uint64_t{1}; }), inner_(RouterLimits{}, clock_) {}
  std::vector<std::string> calls;

  cache::ChannelTable& table() override { return inner_.table(); }
  RouterStats& stats() override { return inner_.stats(); }
  void serve(Subscribers& subscribers) override { inner_.serve(subscribers); }
  void interest(std::string_view pattern, bool add) override {
    calls.push_back((add ? "+" : "-") + std::string(pattern));
    inner_.interest(pattern, add);
  }
  Outcome open(Outlet* by, std::string_view topic) override {
    calls.push_back("open " + std::string(topic));
    return inner_.open(by, topic);
  }
  void attached(cache::Channel& ch, bool exact, bool new_subscriber) override {
    calls.push_back("attached " + ch.topic + (exact ? " exact" : "") + (new_subscriber ? " new" : ""));
    inner_.attached(ch, exact, new_subscriber);
  }
  void detached(cache::Channel& ch, bool exact) override {
    calls.push_back("detached " + ch.topic + (exact ? " exact" : ""));
    inner_.detached(ch, exact);
  }
  void outlet_gone(Outlet* outlet) override {
    calls.push_back("gone " + std::string(outlet->name()));
    inner_.outlet_gone(outlet);
  }
  Outcome settle(Outlet* o, std::span<const std::string_view> p, uint32_t id) override { return inner_.settle(o, p, id); }
  Outcome advertise(std::string_view t, wire::PayloadKind k, cache::ChannelId& out, Advertiser* by) override {
    return inner_.advertise(t, k, out, by);
  }
  Outcome publish(cache::ChannelId id, std::span<const uint8_t> p, bool image, fields::Checked c,
                  const MessageOrigin& origin) override {
    return inner_.publish(id, p, image, c, origin);
  }
  Outcome provide(Outlet* o, std::string_view s, std::string_view p) override { return inner_.provide(o, s, p); }
  Outcome withdraw(Outlet* o, std::string_view s) override { return inner_.withdraw(o, s); }
  Outcome provider_publish(Outlet* o, cache::ChannelId id, std::span<const uint8_t> p, bool image,
                           fields::Checked c) override {
    return inner_.provider_publish(o, id, p, image, c);
  }
  Outcome provider_status(Outlet* o, cache::ChannelId id, wire::ChannelState s, wire::Code c,
                          std::string_view t) override {
    return inner_.provider_status(o, id, s, c, t);
  }
  Outcome snapshot(Outlet* o, std::string_view t, uint32_t id) override { return inner_.snapshot(o, t, id); }
  Outcome list_channels_page(Outlet* o, ListingCursor& c, size_t n) override { return inner_.list_channels_page(o, c, n); }
  uint32_t listing_shards() const override { return inner_.listing_shards(); }
  Outcome close_by_admin(std::string_view t) override { return inner_.close_by_admin(t); }
  void on_tick(uint64_t now) override { inner_.on_tick(now); }
  std::vector<std::pair<std::string, uint32_t>> provider_loads(std::string_view s) const override {
    return inner_.provider_loads(s);
  }
  bool mirrors() const override { return false; }

 private:
  OwnedChannels inner_;
};

class RouterSeamTest : public ::testing::Test {
 protected:
  output::Fanout fanout{1 << 20};
  RecordingOwner owner;
  Router router{fanout, owner};
  RecordingOutlet a{fanout, "a"}, b{fanout, "b"};
};

// A mirror's gateway weighs an access point's entry when the interest has
// reached it: the pattern's interest must precede what attaches under it.
TEST_F(RouterSeamTest, InterestPrecedesTheChannelsItAttaches) {
  cache::ChannelId id = 0;
  ASSERT_TRUE(router.advertise("X/Y", wire::PayloadKind::FieldList, id).ok());
  ASSERT_TRUE(router.subscribe(&a, "X/>").ok());
  ASSERT_TRUE(router.subscribe(&b, "X/Y").ok());
  ASSERT_TRUE(router.subscribe(&a, "X/Y").ok());  // a's entry exists: counted, not new
  EXPECT_EQ(owner.calls, (std::vector<std::string>{"+X/>", "attached X/Y new", "+X/Y", "attached X/Y exact new",
                                                   "open X/Y", "+X/Y", "attached X/Y exact", "open X/Y"}));
}

TEST_F(RouterSeamTest, ADepartingOutletGoesToTheOwnerBeforeItsSubscriptions) {
  cache::ChannelId id = 0;
  ASSERT_TRUE(router.advertise("X/Y", wire::PayloadKind::FieldList, id).ok());
  ASSERT_TRUE(router.subscribe(&a, "X/Y").ok());
  owner.calls.clear();
  router.remove_outlet(&a);
  EXPECT_EQ(owner.calls, (std::vector<std::string>{"gone a", "detached X/Y exact", "-X/Y"}));
}

// A channel created later attaches the patterns that cover it, and tells the owner.
TEST_F(RouterSeamTest, ANewChannelAttachesWaitingPatterns) {
  ASSERT_TRUE(router.subscribe(&a, "X/>").ok());
  owner.calls.clear();
  cache::ChannelId id = 0;
  ASSERT_TRUE(router.advertise("X/Z", wire::PayloadKind::FieldList, id).ok());
  EXPECT_EQ(owner.calls, (std::vector<std::string>{"attached X/Z new"}));
  ASSERT_TRUE(router.unsubscribe(&a, "X/>").ok());
  EXPECT_EQ(owner.calls, (std::vector<std::string>{"attached X/Z new", "detached X/Z", "-X/>"}));
}

}  // namespace
}  // namespace tw::broker
