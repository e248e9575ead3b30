// IT15: conflated subscriptions (SUBSCRIBE conflate_ms). A publisher sends
// 5,000 field-list updates over 10 channels across about a second; one
// subscriber subscribes in real time, another with conflate = 200 ms. The
// real-time one gets every update in order; the conflated one gets, per
// channel, its initial image and then merged refresh IMAGEs, no more of them
// than the wall time it watched allows (at most one per interval), and ends
// with exactly the publisher's final state of every channel.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tickwire/fields/field_list.h"
#include "it_support.h"
#include "testlib/fields.h"

namespace tw::it {
namespace {

constexpr int kChannels = 10;
constexpr int kUpdates = 5'000;
constexpr int kBatches = 50;
constexpr auto kBatchPause = std::chrono::milliseconds(20);  // paces the run over about a second
constexpr uint32_t kConflateMs = 200;
using SteadyClock = std::chrono::steady_clock;

std::string topic_of(int c) { return "CONF/" + std::to_string(c); }

// Update k: field 22 always and one of five others, so the merged state depends on every update.
std::vector<uint8_t> update_payload(int k) {
  return testing::field_list({{22, int64_t{k}}, {static_cast<uint16_t>(100 + k % 5), int64_t{k * 7}}});
}

struct Seen {
  uint64_t seq = 0;
  fields::FieldImage image;
  uint64_t images = 0;
  uint64_t updates = 0;
};

// One subscriber's view of its stream; protocol violations go to errors.
// Channels are keyed by topic: the broker chooses channel ids and promises no
// order among them (docs/protocol.md, "Channel ids"; a tiered broker numbers
// each gateway's channels apart), so the topic named by CHANNEL is the key.
struct Stream {
  std::map<uint32_t, std::string> topics;  // channel id -> topic, from CHANNEL
  std::map<std::string, Seen> by_topic;
  std::vector<std::string> errors;
  uint64_t updates = 0;

  void apply(const OwnedFrame& f) {
    if (auto m = f.as<wire::ChannelIntro>()) {
      topics[m->channel_id] = std::string(m->topic);
    } else if (auto m = f.as<wire::Image>()) {
      if (m->request_id != 0) return errors.push_back("unexpected snapshot reply");
      Seen& s = seen(m->channel_id);
      if (m->seq < s.seq) errors.push_back("IMAGE went back in seq");
      s.seq = m->seq;
      if (!s.image.replace(m->payload)) errors.push_back("bad image payload");
      ++s.images;
    } else if (auto u = f.as<wire::Update>()) {
      Seen& s = seen(u->channel_id);
      if (s.seq == 0) errors.push_back("UPDATE before IMAGE");
      if (u->seq != s.seq + 1) errors.push_back("UPDATE across a gap on channel " + std::to_string(u->channel_id));
      s.seq = u->seq;
      if (!s.image.merge(u->payload)) errors.push_back("bad update payload");
      ++s.updates;
      ++updates;
    } else if (f.type() == wire::MsgType::Error || f.type() == wire::MsgType::Status) {
      errors.push_back("unexpected " + describe(f));
    }
  }
  Seen& seen(uint32_t channel_id) {
    auto it = topics.find(channel_id);
    if (it == topics.end()) errors.push_back("message before CHANNEL on channel " + std::to_string(channel_id));
    return by_topic[it == topics.end() ? "?" + std::to_string(channel_id) : it->second];
  }
  bool reached(const std::vector<uint64_t>& final_seq) const {
    if (by_topic.size() != final_seq.size()) return false;
    for (size_t c = 0; c < final_seq.size(); ++c) {
      auto it = by_topic.find(topic_of(static_cast<int>(c)));
      if (it == by_topic.end() || it->second.seq != final_seq[c]) return false;
    }
    return true;
  }
};

class ConflationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    broker = std::make_unique<BrokerProcess>(BrokerOptions{});
    ASSERT_TRUE(broker->ready()) << broker->err();
    ASSERT_TRUE(open_client(pub, broker->port(), "pub"));
    for (int c = 0; c < kChannels; ++c) {
      auto first = testing::field_list({{22, int64_t{-1}}});
      ASSERT_TRUE(pub.register_topic(static_cast<uint32_t>(c + 1), wire::PayloadKind::FieldList, topic_of(c)));
      ASSERT_TRUE(pub.publish(static_cast<uint32_t>(c + 1), first));
      expected[c].merge(first);
    }
    final_seq.assign(kChannels, 1);
  }

  // Reads until the stream reached every channel's final seq (known once all is published).
  void read_until_final(RawClient& client, Stream& stream, SteadyClock::time_point& last_frame) {
    const auto give_up_after = std::chrono::milliseconds(testing::kDefaultTimeoutMs);
    auto quiet_since = SteadyClock::now();
    while (!(published.load() && stream.reached(final_seq))) {
      auto f = client.next_message(50);
      if (!f) {
        if (client.closed_by_peer() || (published.load() && SteadyClock::now() - quiet_since > give_up_after)) return;
        continue;
      }
      last_frame = quiet_since = SteadyClock::now();
      stream.apply(*f);
    }
  }

  std::unique_ptr<BrokerProcess> broker;
  RawClient pub;
  std::map<int, fields::FieldImage> expected;
  std::vector<uint64_t> final_seq;
  std::atomic<bool> published{false};
};

TEST_F(ConflationTest, ConflatedSubscriberGetsAtMostOneMergedRefreshPerIntervalAndTheFinalState) {
  RawClient realtime, conflated;
  ASSERT_TRUE(open_client(realtime, broker->port(), "realtime"));
  ASSERT_TRUE(realtime.subscribe(1, "CONF/>").has_value());
  ASSERT_TRUE(open_client(conflated, broker->port(), "screen"));
  const auto subscribed_at = SteadyClock::now();
  ASSERT_TRUE(conflated.send_encoded([&](std::span<uint8_t> out) {
    return wire::encode(out, wire::MsgType::Subscribe,
                        wire::Subscribe{1, "CONF/>", wire::SlowPolicy::Default, kConflateMs});
  }));
  auto ack = conflated.wait_ack(1);
  ASSERT_TRUE(ack.has_value());
  ASSERT_EQ(ack->code, wire::Code::Ok);

  Stream rt, cf;
  SteadyClock::time_point rt_last{}, cf_last = subscribed_at;
  std::thread rt_reader([&] { read_until_final(realtime, rt, rt_last); });
  std::thread cf_reader([&] { read_until_final(conflated, cf, cf_last); });

  constexpr int kPerBatch = kUpdates / kBatches;
  for (int b = 0; b < kBatches; ++b) {
    std::vector<uint8_t> batch;
    for (int j = b * kPerBatch; j < (b + 1) * kPerBatch; ++j) {
      const int c = j % kChannels;
      auto payload = update_payload(j);
      testing::append_frame(batch, wire::kPublishFixedSize + payload.size(), [&](std::span<uint8_t> out) {
        return wire::encode(out, wire::Publish{static_cast<uint32_t>(c + 1), false, payload});
      });
      expected[c].merge(payload);
      ++final_seq[c];
    }
    ASSERT_TRUE(pub.send_raw(batch));
    std::this_thread::sleep_for(kBatchPause);
  }
  published = true;
  rt_reader.join();
  cf_reader.join();

  // Real time: every update, in order, and the final state.
  EXPECT_TRUE(rt.errors.empty()) << rt.errors.front();
  EXPECT_EQ(rt.updates, static_cast<uint64_t>(kUpdates));
  ASSERT_TRUE(rt.reached(final_seq));

  // Conflated: images only, bounded by the wall time watched, ending at the final state.
  EXPECT_TRUE(cf.errors.empty()) << cf.errors.front();
  EXPECT_EQ(cf.updates, 0u);
  ASSERT_TRUE(cf.reached(final_seq)) << "the conflated stream never reached the final state";
  const auto watched_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(cf_last - subscribed_at).count();
  const uint64_t bound = static_cast<uint64_t>(watched_ms) / kConflateMs + 2;
  uint64_t conflated_images = 0;
  for (int c = 0; c < kChannels; ++c) {
    SCOPED_TRACE(topic_of(c));
    const Seen& seen = cf.by_topic[topic_of(c)];
    EXPECT_GE(seen.images, 2u);  // the initial image and at least one merged refresh
    EXPECT_LE(seen.images, bound) << "watched " << watched_ms << " ms";
    std::string why;
    EXPECT_TRUE(testing::same_fields(seen.image, expected[c], &why)) << why;
    std::string rt_why;
    EXPECT_TRUE(testing::same_fields(rt.by_topic[topic_of(c)].image, expected[c], &rt_why)) << rt_why;
    conflated_images += seen.images;
  }
  EXPECT_LT(conflated_images, static_cast<uint64_t>(kUpdates) / 2) << "updates were not merged";
}

}  // namespace
}  // namespace tw::it
