// Interactive providers against a real broker: on-demand REQUEST, linger
// RELEASE, NOT_FOUND memory, request timeout and retry, load balancing,
// coexistence with broadcast publishers, and wildcard subscribers.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <thread>

#include "integration/it_providers_support.h"
#include "integration/it_support.h"
#include "testlib/fields.h"
#include "testlib/provider.h"

namespace tw::it {
namespace {

using testing::InteractiveTimeouts;
using testing::ProviderClient;
using testing::ProviderEvent;
using Clock = std::chrono::steady_clock;

BrokerOptions broker_with(const InteractiveTimeouts& t, std::vector<std::string> extra = {}) {
  BrokerOptions options;
  options.args = testing::interactive_args(t);
  options.args.insert(options.args.end(), extra.begin(), extra.end());
  return options;
}




bool has_image(const StreamModel& m, const std::string& topic) {
  const auto* ch = m.find(topic);
  return ch && ch->has_image;
}

int64_t elapsed_ms(Clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count();
}

TEST(Providers, RequestImageUpdatesThenReleaseAfterLinger) {
  InteractiveTimeouts t;
  t.release_linger_ms = 300;
  BrokerProcess broker(broker_with(t));
  ASSERT_TRUE(broker.ready()) << broker.err();
  ProviderClient p;
  open_provider(p, broker.port(), "p");
  RawClient sub;
  open_subscriber(sub, broker.port(), "sub");
  subscribe_ok(sub, 1, "SVC/IBM");

  auto request = p.next_event();
  ASSERT_TRUE(request && request->is_request());
  EXPECT_EQ(request->topic, "SVC/IBM");
  EXPECT_NE(request->stream_id & wire::kStreamIdBit, 0u);
  ASSERT_TRUE(p.answer(request->stream_id));
  ASSERT_TRUE(p.send_update(request->stream_id, testing::provider_update(7)));

  StreamModel model;
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return model.messages_on("SVC/IBM") == 2; }));
  EXPECT_TRUE(model.errors().empty()) << model.errors().front();
  const auto* ch = model.find("SVC/IBM");
  EXPECT_EQ(ch->channel_id, request->stream_id & ~wire::kStreamIdBit);
  EXPECT_EQ(testing::string_field(ch->image, 2), "p");
  EXPECT_EQ(testing::int_field(ch->image, 3), 7);

  auto unsubscribed_at = Clock::now();
  auto ack = sub.unsubscribe(2, "SVC/IBM");
  ASSERT_TRUE(ack && ack->code == wire::Code::Ok);
  auto release = p.next_event();
  ASSERT_TRUE(release);
  EXPECT_FALSE(release->is_request());
  EXPECT_EQ(release->stream_id, request->stream_id);
  // The linger is a lower bound: the broker started it after our UNSUBSCRIBE left.
  EXPECT_GE(elapsed_ms(unsubscribed_at), t.release_linger_ms);
}

TEST(Providers, ResubscribeWithinLingerCancelsTheRelease) {
  InteractiveTimeouts t;
  t.release_linger_ms = 400;
  BrokerProcess broker(broker_with(t));
  ASSERT_TRUE(broker.ready()) << broker.err();
  ProviderClient p;
  open_provider(p, broker.port(), "p");
  RawClient sub;
  open_subscriber(sub, broker.port(), "sub");
  subscribe_ok(sub, 1, "SVC/A");
  auto request = p.next_event();
  ASSERT_TRUE(request && request->is_request());
  ASSERT_TRUE(p.answer(request->stream_id));
  StreamModel model;
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return has_image(model, "SVC/A"); }));

  ASSERT_TRUE(sub.unsubscribe(2, "SVC/A"));
  model.clear();  // a new subscription starts a new stream
  subscribe_ok(sub, 3, "SVC/A");  // within the linger: the cached image comes back, no new REQUEST
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return has_image(model, "SVC/A"); }));
  // Well past the linger: neither a RELEASE nor a new REQUEST.
  auto event = p.next_event(3 * t.release_linger_ms);
  EXPECT_FALSE(event) << (event->is_request() ? "REQUEST " : "RELEASE ") << event->stream_id;
  // The stream is still live.
  ASSERT_TRUE(p.send_update(request->stream_id, testing::provider_update(1)));
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return model.find("SVC/A")->updates == 1; }));
  EXPECT_TRUE(model.errors().empty()) << model.errors().front();
}

TEST(Providers, NotFoundClosesAndIsRememberedForTheTtl) {
  InteractiveTimeouts t;
  t.not_found_ttl_ms = 600;
  BrokerProcess broker(broker_with(t));
  ASSERT_TRUE(broker.ready()) << broker.err();
  ProviderClient p;
  open_provider(p, broker.port(), "p");
  RawClient s1;
  open_subscriber(s1, broker.port(), "s1");
  subscribe_ok(s1, 1, "SVC/NOPE");
  auto request = p.next_event();
  ASSERT_TRUE(request && request->is_request());
  ASSERT_TRUE(p.not_found(request->stream_id, "no such instrument"));

  StreamModel m1;
  ASSERT_TRUE(testing::collect_until(s1, m1, [&] { return m1.find("SVC/NOPE") && m1.find("SVC/NOPE")->closed_statuses; }));
  const auto* ch = m1.find("SVC/NOPE");
  EXPECT_EQ(ch->state, wire::ChannelState::Closed);
  EXPECT_EQ(ch->status_code, wire::Code::NotFound);
  EXPECT_EQ(ch->status_text, "no such instrument");
  EXPECT_FALSE(ch->has_image);
  // The exact subscription is gone.
  auto unsub = s1.unsubscribe(2, "SVC/NOPE");
  ASSERT_TRUE(unsub);
  EXPECT_EQ(unsub->code, wire::Code::NotSubscribed);

  // Within the TTL a second subscriber is closed at once, without a REQUEST.
  RawClient s2;
  open_subscriber(s2, broker.port(), "s2");
  subscribe_ok(s2, 1, "SVC/NOPE");
  StreamModel m2;
  ASSERT_TRUE(testing::collect_until(s2, m2, [&] { return m2.find("SVC/NOPE") && m2.find("SVC/NOPE")->closed_statuses; }));
  EXPECT_EQ(m2.find("SVC/NOPE")->status_code, wire::Code::NotFound);
  // Fence: the next REQUEST the provider sees is for another topic, of the
  // same gateway (a REQUEST for SVC/NOPE would have come from that one).
  const std::string other = topic_beside("SVC/NOPE", "SVC/OTHER");
  subscribe_ok(s2, 2, other);
  auto next = p.next_event();
  ASSERT_TRUE(next && next->is_request());
  EXPECT_EQ(next->topic, other);
  ASSERT_TRUE(p.answer(next->stream_id));  // else it times out and its RELEASE comes next

  // After the TTL the topic is requested again.
  std::this_thread::sleep_for(std::chrono::milliseconds(t.not_found_ttl_ms + 200));
  RawClient s3;
  open_subscriber(s3, broker.port(), "s3");
  subscribe_ok(s3, 1, "SVC/NOPE");
  auto again = p.next_event();
  ASSERT_TRUE(again && again->is_request());
  EXPECT_EQ(again->topic, "SVC/NOPE");
}

TEST(Providers, UnansweredRequestIsRetriedOnAnotherProvider) {
  InteractiveTimeouts t;
  t.request_timeout_ms = 300;
  BrokerProcess broker(broker_with(t));
  ASSERT_TRUE(broker.ready()) << broker.err();
  ProviderClient slow;
  ProviderClient good;
  open_provider(slow, broker.port(), "slow");
  open_provider(good, broker.port(), "good");
  RawClient sub;
  open_subscriber(sub, broker.port(), "sub");
  subscribe_ok(sub, 1, "SVC/X");

  // Both providers are idle: the first one gets the request and never answers.
  auto first = slow.next_event();
  ASSERT_TRUE(first && first->is_request());
  auto retried = good.next_event();
  ASSERT_TRUE(retried && retried->is_request());
  EXPECT_EQ(retried->topic, "SVC/X");
  EXPECT_EQ(retried->stream_id, first->stream_id);
  auto release = slow.next_event();
  ASSERT_TRUE(release);
  EXPECT_FALSE(release->is_request());
  EXPECT_EQ(release->stream_id, first->stream_id);
  ASSERT_TRUE(good.answer(retried->stream_id));
  // A late answer of the slow provider is stray: subscribers never see it.
  ASSERT_TRUE(slow.answer(first->stream_id));

  StreamModel model;
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return has_image(model, "SVC/X"); }));
  ASSERT_TRUE(good.send_update(retried->stream_id, testing::provider_update(1)));
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return model.find("SVC/X")->updates == 1; }));
  const auto* ch = model.find("SVC/X");
  EXPECT_EQ(ch->images, 1u);
  EXPECT_EQ(testing::string_field(ch->image, 2), "good");
  EXPECT_TRUE(model.errors().empty()) << model.errors().front();
}

TEST(Providers, NoAnswerFromAnyProviderClosesWithRequestTimeout) {
  InteractiveTimeouts t;
  t.request_timeout_ms = 200;
  BrokerProcess broker(broker_with(t));
  ASSERT_TRUE(broker.ready()) << broker.err();
  ProviderClient silent;
  open_provider(silent, broker.port(), "silent");
  RawClient sub;
  open_subscriber(sub, broker.port(), "sub");
  subscribe_ok(sub, 1, "SVC/Q");
  StreamModel model;
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return model.find("SVC/Q") && model.find("SVC/Q")->closed_statuses; }));
  EXPECT_EQ(model.find("SVC/Q")->status_code, wire::Code::RequestTimeout);
  auto request = silent.next_event();
  ASSERT_TRUE(request && request->is_request());
  auto release = silent.next_event();
  ASSERT_TRUE(release && !release->is_request());
  EXPECT_EQ(release->stream_id, request->stream_id);
}

// Subscribes `count` topics SVC/<prefix><i> without waiting for each ACK.
void subscribe_many(RawClient& sub, const std::string& prefix, int count, uint32_t first_request_id) {
  for (int i = 0; i < count; ++i) {
    ASSERT_TRUE(sub.send_subscribe(first_request_id + static_cast<uint32_t>(i), "SVC/" + prefix + std::to_string(i)));
  }
}

// Reads each provider's REQUESTs until `total` have arrived over all of them.
void read_all_requests(std::vector<ProviderClient*> providers, size_t total) {
  auto deadline = Clock::now() + std::chrono::milliseconds(testing::kDefaultTimeoutMs);
  auto sum = [&] {
    size_t n = 0;
    for (auto* p : providers) n += p->requests().size();
    return n;
  };
  while (sum() < total && Clock::now() < deadline) {
    for (auto* p : providers) {
      while (p->next_event(5)) {
      }
    }
  }
  ASSERT_EQ(sum(), total);
}

// Counts LIST_CHANNELS rows of SVC per provider client name.
std::map<std::string, int> listed_per_provider(RawClient& admin) {
  auto reply = admin.list_channels(77, "SVC");
  EXPECT_TRUE(reply.ack && reply.ack->code == wire::Code::Ok);
  std::map<std::string, int> per;
  for (const auto& row : reply.rows) ++per[row.provider.substr(0, row.provider.find('@'))];
  return per;
}

// 30 channels open on p1 alone, then p2 and p3 arrive and 300 more are asked for.
struct Balanced {
  size_t p1 = 0, p2 = 0, p3 = 0;
  std::map<std::string, int> listed;
};
Balanced run_balance(const std::vector<std::string>& extra) {
  InteractiveTimeouts t;
  t.request_timeout_ms = 5000;  // nobody times out while the test reads
  BrokerProcess broker(broker_with(t, extra));
  EXPECT_TRUE(broker.ready()) << broker.err();
  ProviderClient p1, p2, p3;
  RawClient sub;
  Balanced out;
  [&] {
    open_provider(p1, broker.port(), "p1");
    open_subscriber(sub, broker.port(), "sub");
    subscribe_many(sub, "early", 30, 1000);
    ASSERT_TRUE(p1.read_requests(30));
    open_provider(p2, broker.port(), "p2");
    open_provider(p3, broker.port(), "p3");
    subscribe_many(sub, "T", 300, 2000);
    read_all_requests({&p1, &p2, &p3}, 330);
    for (auto* p : {&p1, &p2, &p3}) ASSERT_TRUE(p->answer_all());
    StreamModel model;
    ASSERT_TRUE(testing::collect_until(sub, model, [&] { return model.stream_messages() == 330; }));
    EXPECT_TRUE(model.errors().empty()) << model.errors().front();
    out.listed = listed_per_provider(sub);
  }();
  out.p1 = p1.requests().size();
  out.p2 = p2.requests().size();
  out.p3 = p3.requests().size();
  return out;
}

TEST(Providers, LeastLoadedSpreadsRequestsAndListChannelsShowsIt) {
  Balanced b = run_balance({});
  // 30 + 300 channels end up 110 per provider, whoever had them first.
  EXPECT_NEAR(static_cast<double>(b.p1), 110, 1);
  EXPECT_NEAR(static_cast<double>(b.p2), 110, 1);
  EXPECT_NEAR(static_cast<double>(b.p3), 110, 1);
  EXPECT_EQ(b.listed["p1"], static_cast<int>(b.p1));
  EXPECT_EQ(b.listed["p2"], static_cast<int>(b.p2));
  EXPECT_EQ(b.listed["p3"], static_cast<int>(b.p3));
}

TEST(Providers, RoundRobinIgnoresLoad) {
  Balanced b = run_balance({"--provider-balance", "round-robin"});
  // The 300 late requests rotate: 100 each on top of p1's 30.
  EXPECT_NEAR(static_cast<double>(b.p1), 130, 1);
  EXPECT_NEAR(static_cast<double>(b.p2), 100, 1);
  EXPECT_NEAR(static_cast<double>(b.p3), 100, 1);
  EXPECT_EQ(b.listed["p1"], static_cast<int>(b.p1));
  EXPECT_EQ(b.listed["p2"], static_cast<int>(b.p2));
}

TEST(Providers, BroadcastAndInteractiveServicesCoexist) {
  BrokerProcess broker(broker_with({}));
  ASSERT_TRUE(broker.ready()) << broker.err();
  ProviderClient p;
  open_provider(p, broker.port(), "p");
  RawClient pub;
  open_subscriber(pub, broker.port(), "pub");
  ASSERT_TRUE(pub.register_topic(1, wire::PayloadKind::FieldList, "NEWS/X"));
  ASSERT_TRUE(pub.publish(1, int_payload(1), true));
  RawClient sub;
  open_subscriber(sub, broker.port(), "sub");
  subscribe_ok(sub, 1, "NEWS/X");
  subscribe_ok(sub, 2, "NEWS/NOBODY");  // broadcast service: nothing is requested
  subscribe_ok(sub, 3, "SVC/A");
  auto request = p.next_event();
  ASSERT_TRUE(request && request->is_request());
  EXPECT_EQ(request->topic, "SVC/A");
  ASSERT_TRUE(p.answer(request->stream_id));
  StreamModel model;
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return has_image(model, "SVC/A") && has_image(model, "NEWS/X"); }));
  ASSERT_TRUE(pass_fence(pub, 1, sub, model, "NEWS/X"));
  ASSERT_TRUE(p.send_update(request->stream_id, testing::provider_update(1)));
  ASSERT_TRUE(testing::collect_until(sub, model, [&] { return model.find("SVC/A")->updates == 1; }));
  EXPECT_EQ(model.find("NEWS/NOBODY"), nullptr);
  EXPECT_TRUE(model.errors().empty()) << model.errors().front();
  auto extra = p.next_event(200);
  EXPECT_FALSE(extra) << "unexpected provider event for " << extra->topic;
  auto reply = sub.list_channels(9, "NEWS");
  ASSERT_EQ(reply.rows.size(), 1u);
  EXPECT_EQ(reply.rows[0].topic, "NEWS/X");
  EXPECT_EQ(reply.rows[0].provider, "");
}

TEST(Providers, WildcardsObserveButNeverRequest) {
  BrokerProcess broker(broker_with({}));
  ASSERT_TRUE(broker.ready()) << broker.err();
  ProviderClient p;
  open_provider(p, broker.port(), "p");
  RawClient early;
  open_subscriber(early, broker.port(), "early");
  subscribe_ok(early, 1, "SVC/>");
  subscribe_ok(early, 2, "SVC/*");
  auto none = p.next_event(200);
  EXPECT_FALSE(none) << "a wildcard triggered a REQUEST for " << none->topic;

  RawClient exact;
  open_subscriber(exact, broker.port(), "exact");
  subscribe_ok(exact, 1, "SVC/A");
  auto request = p.next_event();
  ASSERT_TRUE(request && request->is_request());
  ASSERT_TRUE(p.answer(request->stream_id));
  ASSERT_TRUE(p.send_update(request->stream_id, testing::provider_update(1)));
  StreamModel m_early, m_exact;
  ASSERT_TRUE(testing::collect_until(early, m_early, [&] { return m_early.messages_on("SVC/A") == 2; }));
  ASSERT_TRUE(testing::collect_until(exact, m_exact, [&] { return m_exact.messages_on("SVC/A") == 2; }));

  // A wildcard subscribed later sees the open channel at once.
  RawClient late;
  open_subscriber(late, broker.port(), "late");
  subscribe_ok(late, 1, "SVC/>");
  StreamModel m_late;
  ASSERT_TRUE(testing::collect_until(late, m_late, [&] { return has_image(m_late, "SVC/A"); }));
  EXPECT_EQ(testing::int_field(m_late.find("SVC/A")->image, 3), 1);
  for (auto* m : {&m_early, &m_exact, &m_late}) EXPECT_TRUE(m->errors().empty()) << m->errors().front();
  // Wildcards alone do not keep the channel: the exact subscriber leaves, it is released.
  ASSERT_TRUE(exact.unsubscribe(2, "SVC/A"));
  auto release = p.next_event();
  ASSERT_TRUE(release && !release->is_request());
  EXPECT_EQ(release->stream_id, request->stream_id);
}

}  // namespace
}  // namespace tw::it
