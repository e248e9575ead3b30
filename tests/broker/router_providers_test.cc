// Interactive providers, driven step by step with an injected clock: requests,
// release after linger, NOT_FOUND, timeouts and retries, load balancing,
// failover and recovery.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "broker/payloads.h"
#include "broker/provider_loads.h"
#include "broker/recording_outlet.h"
#include "broker/owned_channels.h"
#include "broker/router.h"
#include "tickwire/fields/field_list.h"

namespace tw::broker {
namespace {

constexpr uint64_t kMs = 1'000'000;

std::vector<uint8_t> fields_with(int64_t value) { return int_field(30, value); }

class ProvidersTest : public ::testing::Test {
 protected:
  ProvidersTest() { make_router(Balance::LeastLoaded); }

  void make_router(Balance balance) {
    RouterLimits limits;
    limits.request_timeout_ms = 100;
    limits.release_linger_ms = 50;
    limits.not_found_ttl_ms = 1000;
    limits.balance = balance;
    router = std::make_unique<Router>(limits, fanout, [this] { return now; });
  }
  void advance(uint64_t ms) {
    now += ms * kMs;
    router->on_tick();
  }
  // The provider answers the last REQUEST it received with an image.
  uint32_t answer(RecordingOutlet& provider, int64_t value = 1) {
    const Event* req = provider.last("request");
    EXPECT_NE(req, nullptr);
    if (!req) return 0;
    uint32_t id = req->stream_id & ~wire::kStreamIdBit;
    EXPECT_TRUE(router->provider_publish(&provider, id, fields_with(value), true).ok());
    return id;
  }

  uint64_t now = 1'000 * kMs;
  output::Fanout fanout{1 << 20};
  std::unique_ptr<Router> router;
  RecordingOutlet p1{fanout, "p1"}, p2{fanout, "p2"}, p3{fanout, "p3"};
  RecordingOutlet s1{fanout, "s1"}, s2{fanout, "s2"};
};

TEST_F(ProvidersTest, FirstSubscriberTriggersOneRequestAndGetsTheAnswer) {
  ASSERT_TRUE(router->provide(&p1, "SVC", "").ok());
  ASSERT_TRUE(router->subscribe(&s1, "SVC/IBM").ok());
  ASSERT_TRUE(router->subscribe(&s2, "SVC/IBM").ok());
  ASSERT_EQ(p1.count("request"), 1u);
  EXPECT_EQ(p1.last("request")->topic, "SVC/IBM");
  uint32_t id = answer(p1, 7);
  ASSERT_TRUE(router->provider_publish(&p1, id, fields_with(8), false).ok());
  for (auto* s : {&s1, &s2}) {
    ASSERT_EQ(s->events.size(), 2u);
    EXPECT_EQ(s->events[0].kind, "image");
    EXPECT_EQ(s->events[1].kind, "update");
    EXPECT_EQ(s->events[1].seq, s->events[0].seq + 1);
  }
}

// A protocol with streams only (MQTT, a browser) takes neither role: a
// PROVIDE or a listing from it is refused, never half served.
class StreamsOnlyOutlet final : public Outlet {
 public:
  void send_image(const cache::Channel&, uint32_t) override {}
  void send_delivery(const Delivery&) override {}
  void flush_output() override {}
  std::string_view name() const override { return "streams-only"; }
};

TEST_F(ProvidersTest, AnOutletWithoutTheProviderOrRequesterRoleIsRefusedBoth) {
  StreamsOnlyOutlet browser;
  EXPECT_EQ(router->provide(&browser, "SVC", "").code, wire::Code::UnknownType);
  ASSERT_TRUE(router->subscribe(&s1, "SVC/IBM").ok());
  EXPECT_EQ(router->list_channels(&browser, "SVC", 5).code, wire::Code::UnknownType);
  ASSERT_TRUE(router->provide(&p1, "SVC", "").ok());
  EXPECT_EQ(p1.count("request"), 1u) << "the subscription waited for a provider that can serve it";
}

TEST_F(ProvidersTest, ReleaseAfterLingerUnlessResubscribed) {
  ASSERT_TRUE(router->provide(&p1, "SVC", "").ok());
  ASSERT_TRUE(router->subscribe(&s1, "SVC/IBM").ok());
  answer(p1);
  ASSERT_TRUE(router->unsubscribe(&s1, "SVC/IBM").ok());
  advance(20);
  ASSERT_TRUE(router->subscribe(&s1, "SVC/IBM").ok());  // back within the linger: no release
  advance(100);
  EXPECT_EQ(p1.count("release"), 0u);
  EXPECT_EQ(p1.count("request"), 1u);
  ASSERT_TRUE(router->unsubscribe(&s1, "SVC/IBM").ok());
  advance(20);
  EXPECT_EQ(p1.count("release"), 0u);
  advance(40);
  EXPECT_EQ(p1.count("release"), 1u);
  EXPECT_EQ(router->provider_loads("SVC")[0].second, 0u);
  // Asking again opens a fresh request.
  ASSERT_TRUE(router->subscribe(&s2, "SVC/IBM").ok());
  EXPECT_EQ(p1.count("request"), 2u);
}

TEST_F(ProvidersTest, WildcardsObserveButDoNotOpenOrHoldChannels) {
  ASSERT_TRUE(router->provide(&p1, "SVC", "").ok());
  ASSERT_TRUE(router->subscribe(&s2, "SVC/>").ok());
  EXPECT_EQ(p1.count("request"), 0u);
  ASSERT_TRUE(router->subscribe(&s1, "SVC/IBM").ok());
  answer(p1);
  EXPECT_EQ(s2.count("image"), 1u);  // a channel opened later reaches the wildcard
  ASSERT_TRUE(router->unsubscribe(&s1, "SVC/IBM").ok());
  advance(100);
  EXPECT_EQ(p1.count("release"), 1u);  // the wildcard does not keep it open
}

TEST_F(ProvidersTest, NotFoundClosesAndIsRememberedForTheTtl) {
  ASSERT_TRUE(router->provide(&p1, "SVC", "").ok());
  ASSERT_TRUE(router->subscribe(&s1, "SVC/BAD").ok());
  uint32_t id = p1.last("request")->stream_id & ~wire::kStreamIdBit;
  ASSERT_TRUE(router->provider_status(&p1, id, wire::ChannelState::Closed, wire::Code::NotFound, "no such").ok());
  ASSERT_NE(s1.last("status"), nullptr);
  EXPECT_EQ(s1.last("status")->state, wire::ChannelState::Closed);
  EXPECT_EQ(s1.last("status")->code, wire::Code::NotFound);
  EXPECT_EQ(router->subscription_count(&s1), 0u);  // the exact subscription ended
  // A storm of requests for the bad symbol does not reach the provider.
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(router->subscribe(&s2, "SVC/BAD").ok());
  EXPECT_EQ(p1.count("request"), 1u);
  EXPECT_EQ(s2.count("status"), 5u);  // each attempt is answered CLOSED at once
  EXPECT_EQ(router->stats().not_found_cached, 5u);
  advance(1100);
  ASSERT_TRUE(router->subscribe(&s2, "SVC/BAD").ok());
  EXPECT_EQ(p1.count("request"), 2u);
}

TEST_F(ProvidersTest, TimeoutRetriesOnAnotherProviderThenReports) {
  ASSERT_TRUE(router->provide(&p1, "SVC", "").ok());
  ASSERT_TRUE(router->provide(&p2, "SVC", "").ok());
  ASSERT_TRUE(router->subscribe(&s1, "SVC/IBM").ok());
  RecordingOutlet& first = p1.count("request") ? p1 : p2;
  RecordingOutlet& second = &first == &p1 ? p2 : p1;
  advance(150);
  EXPECT_EQ(first.count("release"), 1u);
  ASSERT_EQ(second.count("request"), 1u);
  advance(150);  // the second is silent too: reported to the subscriber
  ASSERT_NE(s1.last("status"), nullptr);
  EXPECT_EQ(s1.last("status")->state, wire::ChannelState::Closed);
  EXPECT_EQ(s1.last("status")->code, wire::Code::RequestTimeout);
  EXPECT_EQ(router->stats().request_timeouts, 2u);
}

TEST_F(ProvidersTest, LeastLoadedSpreadsChannelsEvenly) {
  for (auto* p : {&p1, &p2, &p3}) ASSERT_TRUE(router->provide(p, "SVC", "").ok());
  for (int i = 0; i < 30; ++i) ASSERT_TRUE(router->subscribe(&s1, "SVC/S" + std::to_string(i)).ok());
  EXPECT_EQ(p1.count("request"), 10u);
  EXPECT_EQ(p2.count("request"), 10u);
  EXPECT_EQ(p3.count("request"), 10u);
}

TEST_F(ProvidersTest, RoundRobinCyclesProviders) {
  make_router(Balance::RoundRobin);
  for (auto* p : {&p1, &p2, &p3}) ASSERT_TRUE(router->provide(p, "SVC", "").ok());
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(router->subscribe(&s1, "SVC/S" + std::to_string(i)).ok());
  EXPECT_EQ(p1.count("request"), 3u);
  EXPECT_EQ(p2.count("request"), 2u);
  EXPECT_EQ(p3.count("request"), 2u);
}

TEST_F(ProvidersTest, ProviderPatternsRestrictWhatTheyAreAsked) {
  ASSERT_TRUE(router->provide(&p1, "SVC", "SVC/EQ/>").ok());
  ASSERT_TRUE(router->provide(&p2, "SVC", "SVC/FX/>").ok());
  ASSERT_TRUE(router->subscribe(&s1, "SVC/FX/EURUSD").ok());
  ASSERT_TRUE(router->subscribe(&s1, "SVC/EQ/IBM").ok());
  ASSERT_EQ(p1.count("request"), 1u);
  EXPECT_EQ(p1.last("request")->topic, "SVC/EQ/IBM");
  ASSERT_EQ(p2.count("request"), 1u);
  EXPECT_EQ(p2.last("request")->topic, "SVC/FX/EURUSD");
  EXPECT_EQ(router->provide(&p3, "SVC", "OTHER/>").code, wire::Code::InvalidTopic);
  EXPECT_EQ(router->provide(&p3, "A/B", "").code, wire::Code::InvalidTopic);
}

TEST_F(ProvidersTest, FailoverMakesChannelsStaleThenRecoversWithoutResubscribing) {
  ASSERT_TRUE(router->provide(&p1, "SVC", "").ok());
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(router->subscribe(&s1, "SVC/S" + std::to_string(i)).ok());
    answer(p1, i);
  }
  ASSERT_TRUE(router->provide(&p2, "SVC", "").ok());
  s1.events.clear();
  router->remove_outlet(&p1);
  EXPECT_EQ(s1.count("status"), 4u);
  EXPECT_EQ(s1.last("status")->state, wire::ChannelState::Stale);
  ASSERT_EQ(p2.count("request"), 4u);
  for (const Event& e : std::vector<Event>(p2.events)) {
    ASSERT_TRUE(router->provider_publish(&p2, e.stream_id & ~wire::kStreamIdBit, fields_with(9), true).ok());
  }
  EXPECT_EQ(s1.count("image"), 4u);
  size_t ok = 0;
  for (const Event& e : s1.events) ok += e.kind == "status" && e.state == wire::ChannelState::Ok;
  EXPECT_EQ(ok, 4u);
  EXPECT_EQ(router->subscription_count(&s1), 4u);
  EXPECT_EQ(router->stats().failovers, 4u);
}

TEST_F(ProvidersTest, WithNoProviderLeftChannelsStayStaleUntilOneArrives) {
  ASSERT_TRUE(router->provide(&p1, "SVC", "").ok());
  ASSERT_TRUE(router->subscribe(&s1, "SVC/IBM").ok());
  answer(p1);
  ASSERT_TRUE(router->withdraw(&p1, "SVC").ok());
  EXPECT_EQ(s1.last("status")->state, wire::ChannelState::Stale);
  // A newcomer to the stale channel gets the cached image and its state.
  ASSERT_TRUE(router->subscribe(&s2, "SVC/IBM").ok());
  EXPECT_EQ(s2.events.at(0).kind, "image");
  EXPECT_EQ(s2.last("status")->state, wire::ChannelState::Stale);
  ASSERT_TRUE(router->provide(&p3, "SVC", "").ok());
  ASSERT_EQ(p3.count("request"), 1u);
  answer(p3, 5);
  EXPECT_EQ(s1.last("status")->state, wire::ChannelState::Ok);
  EXPECT_EQ(s2.last("status")->state, wire::ChannelState::Ok);
}

// The race after a broker restart: subscribers reconnect before their
// provider. Their exact subscriptions are requested when it arrives.
TEST_F(ProvidersTest, SubscriptionsMadeBeforeAnyProviderAreRequestedWhenOneArrives) {
  ASSERT_TRUE(router->subscribe(&s1, "SVC/IBM").ok());
  ASSERT_TRUE(router->subscribe(&s2, "SVC/IBM").ok());
  ASSERT_TRUE(router->subscribe(&s2, "SVC/MSFT/L1").ok());
  ASSERT_TRUE(router->subscribe(&s2, "SVC/*").ok());    // wildcards never open channels
  ASSERT_TRUE(router->subscribe(&s1, "OTHER/X").ok());  // another service's stays waiting
  ASSERT_TRUE(router->provide(&p1, "SVC", "").ok());
  ASSERT_EQ(p1.count("request"), 2u);  // one per topic, not per subscriber
  std::vector<std::string> asked;
  for (const Event& e : p1.events) {
    if (e.kind == "request") asked.push_back(e.topic);
  }
  std::sort(asked.begin(), asked.end());
  EXPECT_EQ(asked, (std::vector<std::string>{"SVC/IBM", "SVC/MSFT/L1"}));
  for (const Event& e : std::vector<Event>(p1.events)) {
    if (e.kind != "request") continue;
    ASSERT_TRUE(router->provider_publish(&p1, e.stream_id & ~wire::kStreamIdBit, fields_with(9), true).ok());
  }
  EXPECT_EQ(s1.count("image"), 1u);
  EXPECT_EQ(s2.count("image"), 2u);
  // A second provider finds nothing new to request.
  ASSERT_TRUE(router->provide(&p2, "SVC", "").ok());
  EXPECT_EQ(p2.count("request"), 0u);
}

TEST_F(ProvidersTest, WaitingSubscriptionOutsideTheProvidersPatternIsStaleNotRequested) {
  ASSERT_TRUE(router->subscribe(&s1, "SVC/B/X").ok());
  ASSERT_TRUE(router->provide(&p1, "SVC", "SVC/A/*").ok());
  EXPECT_EQ(p1.count("request"), 0u);
  ASSERT_NE(s1.last("status"), nullptr);
  EXPECT_EQ(s1.last("status")->state, wire::ChannelState::Stale);
  ASSERT_TRUE(router->provide(&p2, "SVC", "").ok());  // an orphan: requested from the next provider
  EXPECT_EQ(p2.count("request"), 1u);
}

TEST_F(ProvidersTest, StrayProviderMessagesAreIgnoredAndCounted) {
  ASSERT_TRUE(router->provide(&p1, "SVC", "").ok());
  ASSERT_TRUE(router->provide(&p2, "SVC", "").ok());
  ASSERT_TRUE(router->subscribe(&s1, "SVC/IBM").ok());
  RecordingOutlet& asked = p1.count("request") ? p1 : p2;
  RecordingOutlet& other = &asked == &p1 ? p2 : p1;
  uint32_t id = asked.last("request")->stream_id & ~wire::kStreamIdBit;
  EXPECT_FALSE(router->provider_publish(&asked, id, fields_with(1), false).ok());  // UPDATE before IMAGE
  EXPECT_FALSE(router->provider_publish(&other, id, fields_with(1), true).ok());   // not asked
  EXPECT_FALSE(router->provider_publish(&asked, 999, fields_with(1), true).ok());  // no such channel
  EXPECT_FALSE(router->provider_status(&other, id, wire::ChannelState::Closed, wire::Code::NotFound, "").ok());
  EXPECT_EQ(router->stats().stray_provider_messages, 4u);
  EXPECT_TRUE(s1.events.empty());
  answer(asked);
  answer(asked);  // answering twice is a refresh, not an error
  EXPECT_EQ(s1.count("image"), 2u);
}

TEST_F(ProvidersTest, BroadcastAndInteractiveServicesCoexist) {
  ASSERT_TRUE(router->provide(&p1, "SVC", "").ok());
  cache::ChannelId id = 0;
  ASSERT_TRUE(router->advertise("FEED/IBM", wire::PayloadKind::FieldList, id).ok());
  ASSERT_TRUE(router->subscribe(&s1, "FEED/IBM").ok());
  ASSERT_TRUE(router->publish(id, fields_with(1), false).ok());
  EXPECT_EQ(p1.count("request"), 0u);
  EXPECT_EQ(s1.count("image"), 1u);
}

TEST_F(ProvidersTest, ListChannelsShowsProviderAndState) {
  ASSERT_TRUE(router->provide(&p1, "SVC", "").ok());
  ASSERT_TRUE(router->subscribe(&s1, "SVC/IBM").ok());
  answer(p1);
  router->list_channels(&s2, "SVC", 1);
  ASSERT_EQ(s2.count("info"), 1u);
  EXPECT_EQ(s2.last("info")->topic, "SVC/IBM");
  router->list_channels(&s2, "OTHER", 2);
  EXPECT_EQ(s2.count("info"), 1u);
}

// Two gateways' routers that share their provider loads balance as one
// router does: 5 channels in one shard and 3 in the other end 4/4, not 5/3.
TEST(SharedProviderLoads, RoutersOfOneBrokerBalanceAsOne) {
  output::Fanout fanout{1 << 20};
  ProviderLoads loads;
  RouterLimits limits;
  OwnedChannels owned_a(limits), owned_b(limits);  // two gateways' channels
  owned_a.share_provider_loads(loads);
  owned_b.share_provider_loads(loads);
  Router a(fanout, owned_a), b(fanout, owned_b);
  RecordingOutlet a1{fanout, "p1"}, a2{fanout, "p2"}, b1{fanout, "p1"}, b2{fanout, "p2"};
  RecordingOutlet sa{fanout, "s"}, sb{fanout, "s"};
  a1.key = b1.key = 1;  // the same two connections, as each gateway sees them
  a2.key = b2.key = 2;
  for (auto [router, p] : {std::pair{&a, &a1}, {&a, &a2}, {&b, &b1}, {&b, &b2}}) {
    ASSERT_TRUE(router->provide(p, "SVC", "").ok());
  }
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(a.subscribe(&sa, "SVC/A" + std::to_string(i)).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(b.subscribe(&sb, "SVC/B" + std::to_string(i)).ok());
  EXPECT_EQ(a1.count("request") + b1.count("request"), 4u);
  EXPECT_EQ(a2.count("request") + b2.count("request"), 4u);
  EXPECT_EQ(loads.total(1, "SVC"), 4u);
  EXPECT_EQ(loads.total(2, "SVC"), 4u);
  // A provider that goes leaves no load behind in either router's view.
  a.remove_outlet(&a1);
  b.remove_outlet(&b1);
  EXPECT_EQ(loads.total(1, "SVC"), 0u);
  EXPECT_EQ(loads.total(2, "SVC"), 8u) << "p1's channels fail over to p2";
}

// Round robin too: one rotation over both routers, not one each.
TEST(SharedProviderLoads, RoundRobinIsOneRotationOverAllRouters) {
  output::Fanout fanout{1 << 20};
  ProviderLoads loads;
  RouterLimits limits;
  limits.balance = Balance::RoundRobin;
  OwnedChannels owned_a(limits), owned_b(limits);  // two gateways' channels
  owned_a.share_provider_loads(loads);
  owned_b.share_provider_loads(loads);
  Router a(fanout, owned_a), b(fanout, owned_b);
  RecordingOutlet a1{fanout, "p1"}, a2{fanout, "p2"}, b1{fanout, "p1"}, b2{fanout, "p2"};
  RecordingOutlet sa{fanout, "s"}, sb{fanout, "s"};
  a1.key = b1.key = 1;
  a2.key = b2.key = 2;
  // Each router learns the providers in its own order.
  for (auto [router, p] : {std::pair{&a, &a1}, {&a, &a2}, {&b, &b2}, {&b, &b1}}) {
    ASSERT_TRUE(router->provide(p, "SVC", "").ok());
  }
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(a.subscribe(&sa, "SVC/A" + std::to_string(i)).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(b.subscribe(&sb, "SVC/B" + std::to_string(i)).ok());
  EXPECT_EQ(a1.count("request") + b1.count("request"), 4u);
  EXPECT_EQ(a2.count("request") + b2.count("request"), 4u);
  EXPECT_EQ(a1.count("request"), 3u) << "p1, p2, p1, p2, p1";
  EXPECT_EQ(b2.count("request"), 2u) << "then p2, p1, p2";
}

TEST(SharedProviderLoads, CountsPerProviderAndService) {
  ProviderLoads loads;
  loads.add(7, "A", 3);
  loads.add(7, "B", 1);
  loads.add(8, "A", 2);
  loads.add(7, "A", -1);
  EXPECT_EQ(loads.total(7, "A"), 2u);
  EXPECT_EQ(loads.total(7, "B"), 1u);
  EXPECT_EQ(loads.total(8, "A"), 2u);
  loads.add(7, "A", -2);
  EXPECT_EQ(loads.total(7, "A"), 0u);
  EXPECT_EQ(loads.total(9, "A"), 0u);
}

}  // namespace
}  // namespace tw::broker
