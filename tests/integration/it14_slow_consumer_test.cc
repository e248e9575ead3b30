// IT14: slow consumers. One stalled subscriber (subscribes, then never reads,
// with a small receive buffer) among three healthy ones, while a publisher
// sends 200,000 field-list updates over 100 channels as fast as the healthy
// ones take them. The healthy ones get every message in order; the broker's
// memory stays bounded; then the stalled one reads and, per policy:
//   conflate   -> it ends with exactly the publisher's final state of every
//                 channel, and never an UPDATE across a gap (a channel it fell
//                 behind on resumes with a refresh IMAGE);
//   drop       -> every gap is announced by STATUS MESSAGES_DROPPED, and each
//                 seq jump is exactly the announced count;
//   disconnect -> the broker closes it (ERROR SLOW_CONSUMER, best effort).
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "fields/field_list.h"
#include "it_support.h"
#include "testlib/fields.h"

namespace tw::it {
namespace {

constexpr int kChannels = 100;
constexpr int kUpdates = 200'000;
constexpr int kBatch = 1'000;  // published before waiting for the healthy subscribers
constexpr int kHealthy = 3;
constexpr const char* kMaxOutputBuffer = "262144";
// The broker's RSS may grow by at most this over its size before the load:
// the queue bound is 256 KiB per connection and the cache is 100 small images.
constexpr uint64_t kRssGrowthBoundKiB = 64 * 1024;

std::string topic_of(int c) { return "SLOW/" + std::to_string(c); }

// Update k of the run: field 22 always, and one of five other fields, so the
// merged state depends on every update of the channel.
std::vector<uint8_t> update_payload(int k) {
  return testing::field_list({{22, int64_t{k}}, {static_cast<uint16_t>(100 + k % 5), int64_t{k * 7}}});
}

uint64_t rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      uint64_t kib = 0;
      status >> kib;
      return kib;
    }
    std::getline(status, key);
  }
  return 0;
}

// What one subscriber saw of each channel.
struct Seen {
  uint64_t seq = 0;
  fields::FieldImage image;
  uint64_t announced = 0;  // from the last MESSAGES_DROPPED, consumed by the next UPDATE
  uint64_t refreshes = 0;  // IMAGEs that jumped the seq
  uint64_t notices = 0;
  uint64_t dropped = 0;
};

// Applies stream frames with the per-policy rules; violations go to errors.
struct Subscriber {
  std::map<uint32_t, Seen> by_id;
  std::vector<std::string> errors;
  uint64_t updates = 0;
  uint64_t stream_images = 0;

  void apply(const OwnedFrame& f) {
    if (auto m = f.as<wire::Image>()) {
      if (m->request_id != 0) return;
      Seen& s = by_id[m->channel_id];
      if (s.seq != 0 && m->seq != s.seq + 1) ++s.refreshes;
      s.seq = m->seq;
      if (!s.image.replace(m->payload)) errors.push_back("bad image payload");
      ++stream_images;
    } else if (auto u = f.as<wire::Update>()) {
      Seen& s = by_id[u->channel_id];
      if (s.seq == 0) errors.push_back("UPDATE before IMAGE");
      if (u->seq != s.seq + 1 + s.announced) {
        errors.push_back("channel " + std::to_string(u->channel_id) + ": UPDATE seq " + std::to_string(u->seq) +
                         " after " + std::to_string(s.seq) + " with " + std::to_string(s.announced) + " announced");
      }
      s.announced = 0;
      s.seq = u->seq;
      if (!s.image.merge(u->payload)) errors.push_back("bad update payload");
      ++updates;
    } else if (auto st = f.as<wire::StatusMsg>()) {
      if (st->code != wire::Code::MessagesDropped || st->state != wire::ChannelState::Ok) {
        errors.push_back("unexpected STATUS " + describe(f));
        return;
      }
      Seen& s = by_id[st->channel_id];
      s.announced += std::stoull(std::string(st->text));
      s.dropped += std::stoull(std::string(st->text));
      ++s.notices;
    } else if (f.type() == wire::MsgType::Error) {
      errors.push_back("ERROR " + describe(f));
    }
  }
};

class SlowConsumerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BrokerOptions options;
    options.args = {"--max-output-buffer", kMaxOutputBuffer};
    broker = std::make_unique<BrokerProcess>(options);
    ASSERT_TRUE(broker->ready()) << broker->err();
    ASSERT_TRUE(open_client(pub, broker->port(), "pub"));
    for (int c = 0; c < kChannels; ++c) {
      ASSERT_TRUE(pub.register_topic(static_cast<uint32_t>(c + 1), wire::PayloadKind::FieldList, topic_of(c)));
      ASSERT_TRUE(pub.publish(static_cast<uint32_t>(c + 1), testing::field_list({{22, int64_t{-1}}})));
      expected[c].merge(testing::field_list({{22, int64_t{-1}}}));
    }
    published_seq.assign(kChannels, 1);
  }

  // The stalled subscriber: small receive buffer, subscribed, then not read.
  void connect_stalled(wire::SlowPolicy policy) {
    ASSERT_TRUE(stalled.connect(broker->port(), testing::kDefaultTimeoutMs, 4096));
    ASSERT_TRUE(stalled.hello("stalled").has_value());
    ASSERT_TRUE(stalled.send_encoded([&](std::span<uint8_t> out) {
      return wire::encode(out, wire::MsgType::Subscribe, wire::Subscribe{1, "SLOW/>", policy});
    }));
    auto ack = stalled.wait_ack(1);
    ASSERT_TRUE(ack.has_value());
    ASSERT_EQ(ack->code, wire::Code::Ok);
  }

  // Healthy subscribers read in threads; the publisher waits for them after
  // each batch, so they are never the slow ones. RSS is sampled per batch.
  void run_load() {
    std::vector<RawClient> healthy(kHealthy);
    std::vector<Subscriber> seen(kHealthy);
    std::vector<std::atomic<uint64_t>> updates(kHealthy);
    std::vector<std::atomic<bool>> finished(kHealthy);
    for (int h = 0; h < kHealthy; ++h) {
      ASSERT_TRUE(open_client(healthy[h], broker->port(), "healthy" + std::to_string(h)));
      ASSERT_TRUE(healthy[h].subscribe(1, "SLOW/>").has_value());
    }
    std::vector<std::thread> readers;
    for (int h = 0; h < kHealthy; ++h) {
      readers.emplace_back([&, h] {
        while (updates[h] < static_cast<uint64_t>(kUpdates)) {
          auto f = healthy[h].next_message(testing::kDefaultTimeoutMs);
          if (!f) break;
          seen[h].apply(*f);
          updates[h] = seen[h].updates;
        }
        finished[h] = true;
      });
    }
    const uint64_t rss_before = rss_kib(broker->pid());
    std::vector<uint8_t> batch;
    for (int k = 0; k < kUpdates; k += kBatch) {
      batch.clear();
      for (int j = k; j < k + kBatch; ++j) {
        const int c = j % kChannels;
        auto payload = update_payload(j);
        testing::append_frame(batch, wire::kPublishFixedSize + payload.size(), [&](std::span<uint8_t> out) {
          return wire::encode(out, wire::Publish{static_cast<uint32_t>(c + 1), false, payload});
        });
        expected[c].merge(payload);
        ++published_seq[c];
      }
      ASSERT_TRUE(pub.send_raw(batch));
      for (int h = 0; h < kHealthy; ++h) {
        while (updates[h] < static_cast<uint64_t>(k + kBatch) && !finished[h]) {
          std::this_thread::yield();
        }
      }
      const uint64_t rss = rss_kib(broker->pid());
      max_rss_growth = std::max(max_rss_growth, rss > rss_before ? rss - rss_before : 0);
    }
    for (auto& t : readers) t.join();
    for (int h = 0; h < kHealthy; ++h) {
      SCOPED_TRACE("healthy " + std::to_string(h));
      EXPECT_TRUE(seen[h].errors.empty()) << seen[h].errors.front();
      EXPECT_EQ(seen[h].updates, static_cast<uint64_t>(kUpdates));
      for (auto& [id, s] : seen[h].by_id) EXPECT_EQ(s.refreshes + s.notices, 0u);  // never treated as slow
      ASSERT_EQ(seen[h].by_id.size(), static_cast<size_t>(kChannels));
    }
    EXPECT_LE(max_rss_growth, kRssGrowthBoundKiB) << "broker RSS grew by " << max_rss_growth << " KiB";
  }

  // Reads the stalled subscriber until every channel reached its published
  // seq (and, for drop, got its notice), or the stream ends.
  void read_stalled(Subscriber& s, bool want_notices) {
    auto done = [&] {
      if (s.by_id.size() != static_cast<size_t>(kChannels)) return false;
      int c = 0;
      for (auto& [id, seen] : s.by_id) {
        if (want_notices ? seen.notices == 0 : seen.seq != published_seq[c]) return false;
        ++c;
      }
      return true;
    };
    while (!done()) {
      auto f = stalled.next_message(testing::kDefaultTimeoutMs);
      ASSERT_TRUE(f.has_value()) << "stream ended or stalled before the end";
      s.apply(*f);
    }
  }

  std::unique_ptr<BrokerProcess> broker;
  RawClient pub;
  RawClient stalled;
  std::map<int, fields::FieldImage> expected;
  std::vector<uint64_t> published_seq;
  uint64_t max_rss_growth = 0;
};

TEST_F(SlowConsumerTest, ConflateEndsWithTheFinalStateOfEveryChannel) {
  connect_stalled(wire::SlowPolicy::Default);  // the broker default: conflate
  run_load();
  Subscriber s;
  read_stalled(s, false);
  EXPECT_TRUE(s.errors.empty()) << s.errors.front();  // no UPDATE ever crossed a gap
  uint64_t refreshes = 0;
  int c = 0;
  for (auto& [id, seen] : s.by_id) {  // channel ids follow registration order
    std::string why;
    EXPECT_TRUE(testing::same_fields(seen.image, expected[c], &why)) << topic_of(c) << ": " << why;
    EXPECT_EQ(seen.notices, 0u);
    refreshes += seen.refreshes;
    ++c;
  }
  EXPECT_GT(refreshes, 0u) << "the stalled subscriber never fell behind";
  EXPECT_LT(s.updates + s.stream_images, static_cast<uint64_t>(kUpdates)) << "nothing was conflated";
}

TEST_F(SlowConsumerTest, DropAnnouncesEveryGapWithItsCount) {
  connect_stalled(wire::SlowPolicy::Drop);
  run_load();
  Subscriber s;
  read_stalled(s, true);  // every channel was behind at the end: each gets one notice
  // Now that it caught up, one more message per channel arrives after each notice.
  std::vector<uint8_t> batch;
  for (int c = 0; c < kChannels; ++c) {
    auto payload = update_payload(kUpdates + c);
    testing::append_frame(batch, wire::kPublishFixedSize + payload.size(), [&](std::span<uint8_t> out) {
      return wire::encode(out, wire::Publish{static_cast<uint32_t>(c + 1), false, payload});
    });
    ++published_seq[c];
  }
  ASSERT_TRUE(pub.send_raw(batch));
  read_stalled(s, false);
  EXPECT_TRUE(s.errors.empty()) << s.errors.front();  // each jump equals the announced count
  uint64_t dropped = 0;
  for (auto& [id, seen] : s.by_id) {
    EXPECT_EQ(seen.refreshes, 0u);
    EXPECT_EQ(seen.announced, 0u);
    dropped += seen.dropped;
  }
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(s.updates + dropped, static_cast<uint64_t>(kUpdates + kChannels));
}

TEST_F(SlowConsumerTest, DisconnectClosesTheStalledSubscriberOnly) {
  connect_stalled(wire::SlowPolicy::Disconnect);
  run_load();
  auto code = stalled.wait_closed_with();
  ASSERT_TRUE(code.has_value()) << "the stalled subscriber was not disconnected";
  if (*code != wire::Code::Ok) {  // the ERROR frame is best effort
    EXPECT_EQ(*code, wire::Code::SlowConsumer);
  }
  EXPECT_TRUE(broker->alive());
}

}  // namespace
}  // namespace tw::it
