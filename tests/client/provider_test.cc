// Interactive providers against a real in-process broker: REQUEST -> IMAGE +
// UPDATE, NOT_FOUND, RELEASE after the last subscriber left, STALE recovery,
// channel listing, and re-PROVIDE after the broker restarts.
#include "test_broker.h"

namespace tw::client::testing {
namespace {

config::BrokerConfig quick_release_config() {
  config::BrokerConfig config;
  config.release_linger_ms = 20;
  return config;
}

// A provider client that records what the broker asked of it.
struct RecordingProvider {
  Client client;
  std::vector<std::pair<uint32_t, std::string>> requests;
  std::vector<std::pair<uint32_t, std::string>> releases;
  // Called on every REQUEST after it is recorded; answers nothing by default.
  std::function<void(const Stream&)> answer = [](const Stream&) {};

  Result<uint32_t> provide(std::string_view service, std::string_view pattern = {}) {
    return client.provide(
        service, pattern,
        [this](const Stream& s) {
          requests.emplace_back(s.id, std::string(s.topic));
          answer(s);
        },
        [this](const Stream& s) { releases.emplace_back(s.id, std::string(s.topic)); });
  }
};

// Polls both clients in turn until done(); the provider's answers leave in its poll.
bool poll_both(Client& a, Client& b, const std::function<bool()>& done, int max_rounds = 200) {
  for (int i = 0; i < max_rounds && !done(); ++i) {
    a.poll(20);
    b.poll(20);
  }
  return done();
}

class ProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(provider.client.connect(options_for(broker.port(), "provider")).ok());
    ASSERT_TRUE(subscriber.connect(options_for(broker.port(), "subscriber")).ok());
  }

  // Subscribes to `topic` and waits for the provider to be asked for it.
  uint32_t subscribe_and_await_request(const std::string& topic) {
    size_t before = provider.requests.size();
    EXPECT_TRUE(subscriber.subscribe(topic, recorder(got)).ok());
    EXPECT_TRUE(poll_both(provider.client, subscriber, [&] { return provider.requests.size() > before; }));
    if (provider.requests.size() <= before) return 0;
    EXPECT_EQ(provider.requests.back().second, topic);
    return provider.requests.back().first;
  }

  TestBroker broker{quick_release_config(), 0};
  RecordingProvider provider;
  Client subscriber;
  std::vector<Received> got;
};

TEST_F(ProviderTest, RequestAnsweredWithImageThenUpdate) {
  ASSERT_TRUE(provider.provide("SVC").ok());
  uint32_t stream = subscribe_and_await_request("SVC/EQ/AAPL");
  EXPECT_NE(stream & wire::kStreamIdBit, 0u) << "stream ids carry the stream bit";
  EXPECT_EQ(provider.client.open_stream_count(), 1u);

  ASSERT_TRUE(provider.client.publish_stream(stream, decimal_field(22, 18925, -2), true).ok());
  ASSERT_TRUE(provider.client.publish_stream(stream, decimal_field(22, 18930, -2)).ok());
  ASSERT_TRUE(poll_both(provider.client, subscriber, [&] { return got.size() >= 2; }));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].kind, MessageKind::Image);
  EXPECT_EQ(got[0].topic, "SVC/EQ/AAPL");
  EXPECT_EQ(got[0].payload, decimal_field(22, 18925, -2));
  EXPECT_EQ(got[1].kind, MessageKind::Update);
  EXPECT_EQ(got[1].seq, got[0].seq + 1);
  EXPECT_FALSE(got[1].gap);
  EXPECT_EQ(got[1].payload, decimal_field(22, 18930, -2));
  EXPECT_EQ(provider.client.counters().requests, 1u);
}

TEST_F(ProviderTest, NotFoundClosesTheSubscriberSubscription) {
  provider.answer = [this](const Stream& s) {
    EXPECT_TRUE(provider.client.stream_status(s.id, wire::ChannelState::Closed, wire::Code::NotFound, "no such symbol")
                    .ok());
  };
  ASSERT_TRUE(provider.provide("SVC").ok());
  subscribe_and_await_request("SVC/EQ/NOPE");
  EXPECT_EQ(provider.client.open_stream_count(), 0u) << "a closed stream is forgotten";
  ASSERT_TRUE(poll_both(provider.client, subscriber, [&] { return !got.empty(); }));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].kind, MessageKind::Status);
  EXPECT_EQ(got[0].topic, "SVC/EQ/NOPE");
  EXPECT_EQ(got[0].state, wire::ChannelState::Closed);
  EXPECT_EQ(got[0].code, wire::Code::NotFound);
  EXPECT_EQ(subscriber.subscription_count(), 0u) << "CLOSED ended the exact subscription";
  EXPECT_FALSE(subscriber.unsubscribe("SVC/EQ/NOPE").ok());
}

TEST_F(ProviderTest, ClosedStatusReachesAnExactSubscriptionShadowedByAnOlderWildcard) {
  provider.answer = [this](const Stream& s) {
    (void)provider.client.stream_status(s.id, wire::ChannelState::Closed, wire::Code::NotFound, "no such symbol");
  };
  ASSERT_TRUE(provider.provide("SVC").ok());
  std::vector<Received> wildcard;
  ASSERT_TRUE(subscriber.subscribe("SVC/>", recorder(wildcard)).ok());
  subscribe_and_await_request("SVC/EQ/GONE");
  ASSERT_TRUE(poll_both(provider.client, subscriber, [&] { return !got.empty(); }));
  EXPECT_EQ(got[0].state, wire::ChannelState::Closed);
  ASSERT_EQ(wildcard.size(), 1u) << "the oldest matching subscription gets it, as always";
  EXPECT_EQ(subscriber.subscription_count(), 1u) << "the wildcard subscription stays";
}

TEST_F(ProviderTest, ReleaseAfterTheLastSubscriberLeaves) {
  ASSERT_TRUE(provider.provide("SVC").ok());
  uint32_t stream = subscribe_and_await_request("SVC/EQ/MSFT");
  ASSERT_TRUE(provider.client.publish_stream(stream, decimal_field(22, 1, 0), true).ok());
  ASSERT_TRUE(poll_both(provider.client, subscriber, [&] { return !got.empty(); }));

  ASSERT_TRUE(subscriber.unsubscribe("SVC/EQ/MSFT").ok());
  ASSERT_TRUE(poll_both(provider.client, subscriber, [&] { return !provider.releases.empty(); }));
  EXPECT_EQ(provider.releases[0].first, stream);
  EXPECT_EQ(provider.releases[0].second, "SVC/EQ/MSFT");
  EXPECT_EQ(provider.client.open_stream_count(), 0u);
  EXPECT_FALSE(provider.client.publish_stream(stream, decimal_field(22, 2, 0)).ok()) << "a released stream is closed";
}

TEST_F(ProviderTest, StaleThenRecoveryImageIsNotAGap) {
  ASSERT_TRUE(provider.provide("SVC").ok());
  uint32_t stream = subscribe_and_await_request("SVC/EQ/IBM");
  ASSERT_TRUE(provider.client.publish_stream(stream, decimal_field(22, 1, 0), true).ok());
  ASSERT_TRUE(provider.client.stream_status(stream, wire::ChannelState::Stale, wire::Code::Ok, "feed down").ok());
  ASSERT_TRUE(provider.client.publish_stream(stream, decimal_field(22, 2, 0), true).ok());
  ASSERT_TRUE(provider.client.publish_stream(stream, decimal_field(22, 3, 0)).ok());
  ASSERT_TRUE(poll_both(provider.client, subscriber, [&] { return got.size() >= 5; }));
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[1].kind, MessageKind::Status);
  EXPECT_EQ(got[1].state, wire::ChannelState::Stale);
  EXPECT_EQ(got[2].kind, MessageKind::Image);
  EXPECT_EQ(got[2].payload, decimal_field(22, 2, 0));
  EXPECT_EQ(got[3].kind, MessageKind::Status);
  EXPECT_EQ(got[3].state, wire::ChannelState::Ok);
  EXPECT_EQ(got[4].kind, MessageKind::Update);
  EXPECT_FALSE(got[4].gap);
  EXPECT_EQ(subscriber.counters().gaps, 0u);
  EXPECT_EQ(subscriber.subscription_count(), 1u);
}

TEST_F(ProviderTest, ListChannelsShowsTheOpenStream) {
  ASSERT_TRUE(provider.provide("SVC").ok());
  uint32_t stream = subscribe_and_await_request("SVC/EQ/NVDA");
  ASSERT_TRUE(provider.client.publish_stream(stream, decimal_field(22, 1, 0), true).ok());
  ASSERT_TRUE(poll_both(provider.client, subscriber, [&] { return !got.empty(); }));

  auto rows = subscriber.list_channels("SVC", 10'000);
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  const ChannelRow& row = (*rows)[0];
  EXPECT_EQ(row.topic, "SVC/EQ/NVDA");
  EXPECT_EQ(row.channel_id, stream & ~wire::kStreamIdBit);
  EXPECT_EQ(row.state, wire::ChannelState::Ok);
  EXPECT_EQ(row.subscribers, 1u);
  EXPECT_EQ(row.seq, got[0].seq);
  EXPECT_NE(row.provider.find("provider@"), std::string::npos) << row.provider;

  auto other = subscriber.list_channels("OTHER", 10'000);
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_TRUE(other->empty());
}

TEST_F(ProviderTest, WithdrawnServiceGetsNoMoreRequests) {
  ASSERT_TRUE(provider.provide("SVC").ok());
  EXPECT_FALSE(provider.provide("SVC").ok()) << "one provision per service";
  ASSERT_TRUE(provider.client.withdraw("SVC").ok());
  EXPECT_FALSE(provider.client.withdraw("SVC").ok());
  std::vector<Received> stale;
  ASSERT_TRUE(subscriber.subscribe("SVC/EQ/ORCL", recorder(stale)).ok());
  ASSERT_TRUE(poll_both(provider.client, subscriber, [&] { return !stale.empty(); }));
  EXPECT_EQ(stale[0].kind, MessageKind::Status);
  EXPECT_EQ(stale[0].code, wire::Code::NoProvider);
  EXPECT_TRUE(provider.requests.empty());
}

TEST(ProviderValidation, RejectsBadServicesAndPatterns) {
  Client c;
  auto noop = [](const Stream&) {};
  EXPECT_FALSE(c.provide("SVC/EQ", "", noop, noop).ok()) << "a service is one level";
  EXPECT_FALSE(c.provide("", "", noop, noop).ok());
  EXPECT_FALSE(c.provide("SVC", "OTHER/>", noop, noop).ok()) << "the pattern starts with the service";
  EXPECT_FALSE(c.provide("SVC", "SVC/>/X", noop, noop).ok());
  EXPECT_FALSE(c.provide("SVC", "", nullptr, noop).ok());
  EXPECT_TRUE(c.provide("SVC", "SVC/EQ/>", noop, noop).ok()) << "accepted before connect; sent after WELCOME";
  EXPECT_FALSE(c.publish_stream(wire::kStreamIdBit | 1, decimal_field(22, 1, 0), true).ok());
}

TEST(ProviderReconnect, ReProvidesAndServesFreshRequestsAfterBrokerRestart) {
  auto broker = std::make_unique<TestBroker>(quick_release_config(), 0);
  uint16_t port = broker->port();
  RecordingProvider provider;
  Client subscriber;
  ASSERT_TRUE(provider.client.connect(options_for(port, "provider")).ok());
  ASSERT_TRUE(subscriber.connect(options_for(port, "subscriber")).ok());
  provider.answer = [&](const Stream& s) { (void)provider.client.publish_stream(s.id, decimal_field(22, 7, 0), true); };
  ASSERT_TRUE(provider.provide("SVC").ok());
  std::vector<Received> got;
  ASSERT_TRUE(subscriber.subscribe("SVC/EQ/AMD", recorder(got)).ok());
  ASSERT_TRUE(poll_both(provider.client, subscriber, [&] { return got.size() == 1; }));

  broker.reset();
  ASSERT_TRUE(poll_both(provider.client, subscriber, [&] { return !provider.client.connected() && !subscriber.connected(); }));
  ASSERT_EQ(provider.releases.size(), 1u) << "a lost connection ends the open streams";
  EXPECT_EQ(provider.client.counters().streams_lost, 1u);
  EXPECT_EQ(provider.client.open_stream_count(), 0u);

  broker = std::make_unique<TestBroker>(quick_release_config(), port);
  ASSERT_EQ(broker->port(), port);
  ASSERT_TRUE(poll_both(provider.client, subscriber, [&] { return provider.requests.size() == 2; }))
      << "PROVIDE and SUBSCRIBE were replayed, so the broker asks again";
  EXPECT_EQ(provider.requests[1].second, "SVC/EQ/AMD");
  ASSERT_TRUE(poll_both(provider.client, subscriber, [&] {
    return !got.empty() && got.back().kind == MessageKind::Image && got.size() >= 2;
  }));
  EXPECT_EQ(got.back().topic, "SVC/EQ/AMD");
  EXPECT_EQ(got.back().payload, decimal_field(22, 7, 0));
}

}  // namespace
}  // namespace tw::client::testing
