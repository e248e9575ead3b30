// Request storms against a real broker: thousands of exact subscriptions
// arriving at once must produce exactly one REQUEST per topic, and every
// subscriber exactly one IMAGE per topic it asked for.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "integration/it_providers_support.h"
#include "integration/it_support.h"
#include "testlib/provider.h"

namespace tw::it {
namespace {

using testing::InteractiveTimeouts;
using testing::ProviderClient;

constexpr size_t kSubscribeFrameMax = wire::kHeaderSize + 4 + 2 + 256;

BrokerOptions storm_broker() {
  InteractiveTimeouts t;
  t.request_timeout_ms = 10'000;  // the provider reads the whole storm before answering
  BrokerOptions options;
  options.args = testing::interactive_args(t);
  return options;
}

struct Subscriber {
  RawClient client;
  StreamModel model;
  std::vector<std::string> topics;
};

// Opens a subscriber and sends all its SUBSCRIBEs in one write.
void open_and_subscribe(Subscriber& s, uint16_t port, const std::string& name) {
  std::string why;
  ASSERT_TRUE(open_client(s.client, port, name, &why)) << why;
  std::vector<uint8_t> batch;
  uint32_t request_id = 0;
  for (const auto& topic : s.topics) {
    wire::Subscribe m{++request_id, topic};
    testing::append_frame(batch, kSubscribeFrameMax,
                          [&](std::span<uint8_t> out) { return wire::encode(out, wire::MsgType::Subscribe, m); });
  }
  ASSERT_TRUE(s.client.send_raw(batch));
}

// Reads until every topic of the subscriber has its IMAGE, then checks that
// each got exactly one, from the stream rules' point of view too.
void expect_one_image_per_topic(Subscriber& s) {
  // Counting stream messages keeps the wait cheap; the per-topic check follows.
  ASSERT_TRUE(testing::collect_until(s.client, s.model, [&] { return s.model.stream_messages() >= s.topics.size(); }))
      << "missing images";
  EXPECT_TRUE(s.model.errors().empty()) << s.model.errors().front();
  EXPECT_EQ(s.model.channels().size(), s.topics.size());
  for (const auto& t : s.topics) EXPECT_EQ(s.model.find(t)->images, 1u) << t;
}

// Every REQUEST names a distinct topic and a distinct stream.
void expect_one_request_per_topic(const ProviderClient& p, size_t topics) {
  std::set<std::string> seen_topics;
  std::set<uint32_t> seen_streams;
  for (const auto& r : p.requests()) {
    seen_topics.insert(r.topic);
    seen_streams.insert(r.stream_id);
  }
  EXPECT_EQ(p.requests().size(), topics);
  EXPECT_EQ(seen_topics.size(), topics);
  EXPECT_EQ(seen_streams.size(), topics);
}

TEST(RequestStorm, TenThousandDistinctTopicsOneRequestEach) {
  BrokerProcess broker(storm_broker());
  ASSERT_TRUE(broker.ready()) << broker.err();
  ProviderClient p;
  std::string why;
  ASSERT_TRUE(p.open(broker.port(), "p", 0, &why)) << why;
  ASSERT_TRUE(p.provide(1, "SVC"));

  constexpr int kConnections = 100;
  constexpr int kTopicsEach = 100;
  std::vector<std::unique_ptr<Subscriber>> subs;
  for (int c = 0; c < kConnections; ++c) {
    auto s = std::make_unique<Subscriber>();
    for (int i = 0; i < kTopicsEach; ++i) s->topics.push_back("SVC/C" + std::to_string(c) + "/T" + std::to_string(i));
    subs.push_back(std::move(s));
  }
  for (int c = 0; c < kConnections; ++c) open_and_subscribe(*subs[c], broker.port(), "s" + std::to_string(c));

  ASSERT_TRUE(p.read_requests(kConnections * kTopicsEach)) << p.requests().size() << " requests";
  ASSERT_TRUE(p.answer_all());
  for (auto& s : subs) expect_one_image_per_topic(*s);
  expect_one_request_per_topic(p, kConnections * kTopicsEach);
  auto extra = p.next_event(100);
  EXPECT_FALSE(extra) << "extra event for stream " << extra->stream_id;
}

TEST(RequestStorm, ManySubscribersOfTheSameTopicsShareOneRequest) {
  BrokerProcess broker(storm_broker());
  ASSERT_TRUE(broker.ready()) << broker.err();
  ProviderClient p;
  std::string why;
  ASSERT_TRUE(p.open(broker.port(), "p", 0, &why)) << why;
  ASSERT_TRUE(p.provide(1, "SVC"));

  constexpr int kTopics = 1000;
  std::vector<std::string> topics;
  for (int i = 0; i < kTopics; ++i) topics.push_back("SVC/SHARED/" + std::to_string(i));
  // Ten connections ask while the requests are in flight, five more once the
  // images are cached.
  std::vector<std::unique_ptr<Subscriber>> early, late;
  for (int c = 0; c < 10; ++c) {
    early.push_back(std::make_unique<Subscriber>());
    early.back()->topics = topics;
    open_and_subscribe(*early.back(), broker.port(), "early" + std::to_string(c));
  }
  ASSERT_TRUE(p.read_requests(kTopics));
  ASSERT_TRUE(p.answer_all());
  for (auto& s : early) expect_one_image_per_topic(*s);
  for (int c = 0; c < 5; ++c) {
    late.push_back(std::make_unique<Subscriber>());
    late.back()->topics = topics;
    open_and_subscribe(*late.back(), broker.port(), "late" + std::to_string(c));
  }
  for (auto& s : late) expect_one_image_per_topic(*s);
  expect_one_request_per_topic(p, kTopics);
  auto extra = p.next_event(100);
  EXPECT_FALSE(extra) << "extra event for stream " << extra->stream_id;
  // Every channel has all fifteen subscribers.
  auto reply = early[0]->client.list_channels(99999, "SVC");
  ASSERT_EQ(reply.rows.size(), static_cast<size_t>(kTopics));
  for (const auto& row : reply.rows) EXPECT_EQ(row.subscribers, 15u) << row.topic;
}

}  // namespace
}  // namespace tw::it
