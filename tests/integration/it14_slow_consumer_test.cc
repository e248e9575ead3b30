// IT14: slow consumers. One stalled subscriber (subscribes, then never reads,
// with a small receive buffer) among three healthy ones, while a publisher
// sends field-list updates over 100 channels for kPublishSeconds of wall time.
//
// The publisher is closed-loop: it keeps at most kWindow updates ahead of the
// slowest healthy subscriber and no further, so by construction it runs at
// the highest rate the healthy subscribers sustain (on this machine, in this
// build) and never makes one of them a slow consumer. The achieved rate and
// the broker's RSS are printed, never asserted. The healthy ones get every
// message in order; the broker's memory stays bounded; then the stalled one
// reads and, per policy:
//   conflate   -> it ends with exactly the publisher's final state of every
//                 channel, and never an UPDATE across a gap (a channel it fell
//                 behind on resumes with a refresh IMAGE);
//   drop       -> every gap is announced by STATUS MESSAGES_DROPPED, and each
//                 seq jump is exactly the announced count;
//   disconnect -> the broker closes it (ERROR SLOW_CONSUMER, best effort).
// Nothing depends on timing or on how many threads the broker runs: the run
// ends by the clock, and every check is on what was published.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tickwire/fields/field_list.h"
#include "it14_support.h"
#include "it_support.h"
#include "testlib/fields.h"

namespace tw::it {
namespace {

using Clock = std::chrono::steady_clock;
using slow::Subscriber;

constexpr int kChannels = 100;
constexpr int kPublishSeconds = 10;
constexpr int kBatch = 500;           // updates per write of the publisher
constexpr int kWindow = 4 * kBatch;   // most updates in flight to the slowest healthy subscriber
constexpr int kHealthy = 3;
constexpr size_t kMaxOutputBuffer = 256 * 1024;
constexpr int kReadPollMs = 50;       // a healthy reader re-checks whether the run ended
constexpr auto kRssSamplePeriod = std::chrono::milliseconds(50);
// The broker's RSS may grow by at most this over its size before the load,
// whatever the run's length: the queue bound is 256 KiB per connection and
// the cache is 100 small images, with room for the allocator.
constexpr uint64_t kRssGrowthBoundKiB = 64 * 1024;
// With G gateways and A access points (--threads G+A, from TW_TEST_THREADS as
// BrokerProcess passes it) the fixed structures come on top, each touched
// once the traffic wraps around it: a pair of 8 MiB rings per gateway and
// access point link, and an 8 MiB arena per thread (docs/ARCHITECTURE.md, "Threads").
constexpr uint64_t kRssPerLinkKiB = 2 * 8 * 1024;
constexpr uint64_t kRssPerThreadKiB = 8 * 1024;

uint64_t rss_growth_bound_kib() {
  const char* threads = std::getenv("TW_TEST_THREADS");
  unsigned gateways = 0;
  unsigned access_points = 0;
  if (threads != nullptr && std::sscanf(threads, "%u+%u", &gateways, &access_points) != 2) {
    gateways = access_points = 0;  // "", "single": one thread
  }
  return kRssGrowthBoundKiB + uint64_t{gateways} * access_points * kRssPerLinkKiB +
         uint64_t{gateways + access_points} * kRssPerThreadKiB;
}

std::string topic_of(int c) { return "SLOW/" + std::to_string(c); }

// The publisher's index of a channel from its topic; -1 when not one of ours.
int channel_of(const std::string& topic) {
  int c = -1;
  if (std::sscanf(topic.c_str(), "SLOW/%d", &c) != 1 || c < 0 || c >= kChannels) return -1;
  return c;
}

// Update k of the run: field 22 always, and one of five other fields, so the
// merged state depends on the updates of the channel.
std::vector<uint8_t> update_payload(int64_t k) {
  return testing::field_list({{22, k}, {static_cast<uint16_t>(100 + k % 5), k * 7}});
}

// What one load run measured, for the log.
struct LoadReport {
  uint64_t published = 0;
  double seconds = 0;
  uint64_t rss_before_kib = 0;
  uint64_t rss_after_kib = 0;
  uint64_t max_rss_growth_kib = 0;
};

class SlowConsumerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BrokerOptions options;
    options.args = {"--max-output-buffer", std::to_string(kMaxOutputBuffer)};
    options.log_level = "info";  // the slow-consumer lines of the log are checked
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

  // Appends update `k` (on channel k % kChannels) to `batch` and to the expected state.
  void add_update(std::vector<uint8_t>& batch, int64_t k) {
    const int c = static_cast<int>(k % kChannels);
    auto payload = update_payload(k);
    testing::append_frame(batch, wire::kPublishFixedSize + payload.size(), [&](std::span<uint8_t> out) {
      return wire::encode(out, wire::Publish{static_cast<uint32_t>(c + 1), false, payload});
    });
    expected[c].merge(payload);
    ++published_seq[c];
    ++published;
  }

  // Reads one healthy subscriber until it has `target` updates (set when the
  // publisher stops), the stream ends, or nothing came for the safety timeout.
  static void read_healthy(RawClient& client, Subscriber& seen, std::atomic<uint64_t>& received,
                           const std::atomic<uint64_t>& target) {
    auto last_frame = Clock::now();
    while (seen.updates < target.load()) {
      auto f = client.next_message(kReadPollMs);
      if (!f) {
        if (client.closed_by_peer()) return;
        if (Clock::now() - last_frame > std::chrono::milliseconds(testing::kDefaultTimeoutMs)) return;
        continue;
      }
      last_frame = Clock::now();
      seen.apply(*f);
      received.store(seen.updates);
    }
  }

  // Publishes batch after batch, each only once the slowest healthy
  // subscriber is within kWindow of the end; stops at `deadline`, or when a
  // reader ended or a write failed (false).
  bool publish_until(Clock::time_point deadline, const std::vector<std::atomic<uint64_t>>& received,
                     const std::vector<std::atomic<bool>>& finished, LoadReport& report) {
    std::vector<uint8_t> batch;
    auto next_sample = Clock::now();
    for (;;) {
      for (int h = 0; h < kHealthy; ++h) {
        while (published + kBatch > received[h].load() + kWindow) {
          if (finished[h].load() || Clock::now() >= deadline) return !finished[h].load();
          std::this_thread::yield();
        }
      }
      const auto now = Clock::now();
      if (now >= deadline) return true;
      if (now >= next_sample) {
        sample_rss(report);
        next_sample = now + kRssSamplePeriod;
      }
      batch.clear();
      const auto first = static_cast<int64_t>(published);
      for (int64_t k = first; k < first + kBatch; ++k) add_update(batch, k);
      if (!pub.send_raw(batch)) return false;
    }
  }

  void sample_rss(LoadReport& report) {
    const uint64_t rss = slow::rss_kib(broker->pid());
    report.max_rss_growth_kib =
        std::max(report.max_rss_growth_kib, rss > report.rss_before_kib ? rss - report.rss_before_kib : 0);
  }

  // The load: healthy subscribers read in threads while the publisher runs
  // for kPublishSeconds; then every healthy one must have every update.
  void run_load(const char* policy) {
    std::vector<RawClient> healthy(kHealthy);
    std::vector<Subscriber> seen(kHealthy);
    std::vector<std::atomic<uint64_t>> received(kHealthy);
    std::vector<std::atomic<bool>> finished(kHealthy);
    std::atomic<uint64_t> target{std::numeric_limits<uint64_t>::max()};
    for (int h = 0; h < kHealthy; ++h) {
      ASSERT_TRUE(open_client(healthy[h], broker->port(), "healthy" + std::to_string(h)));
      ASSERT_TRUE(healthy[h].subscribe(1, "SLOW/>").has_value());
    }
    // Even with the whole window queued in the broker, a healthy subscriber
    // stays under half the bound: it is never congested, whatever the timing.
    const size_t update_frame = wire::kUpdateFixedSize + update_payload(int64_t{1} << 40).size();
    ASSERT_LT(kWindow * update_frame, kMaxOutputBuffer / 2);

    LoadReport report;
    report.rss_before_kib = slow::rss_kib(broker->pid());
    std::vector<std::thread> readers;
    for (int h = 0; h < kHealthy; ++h) {
      readers.emplace_back([&, h] {
        read_healthy(healthy[h], seen[h], received[h], target);
        finished[h] = true;
      });
    }
    const auto start = Clock::now();
    const bool published_ok = publish_until(start + std::chrono::seconds(kPublishSeconds), received, finished, report);
    report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    report.published = published;
    target = published;
    for (auto& t : readers) t.join();
    sample_rss(report);
    report.rss_after_kib = slow::rss_kib(broker->pid());
    log_report(policy, report);

    EXPECT_TRUE(published_ok) << "the publisher stopped early (a reader ended or a write failed)";
    for (int h = 0; h < kHealthy; ++h) {
      SCOPED_TRACE("healthy " + std::to_string(h));
      EXPECT_EQ(seen[h].error_count, 0u) << seen[h].errors.front();
      EXPECT_EQ(seen[h].updates, published);
      for (auto& [id, s] : seen[h].by_id) {
        EXPECT_EQ(s.refreshes + s.notices, 0u);  // never treated as slow
        const int c = channel_of(s.topic);
        ASSERT_GE(c, 0) << "channel " << id << " came without its CHANNEL";
        EXPECT_TRUE(testing::same_fields(s.image, expected[c])) << topic_of(c);
      }
      ASSERT_EQ(seen[h].by_id.size(), static_cast<size_t>(kChannels));
    }
    EXPECT_LE(report.max_rss_growth_kib, rss_growth_bound_kib())
        << "broker RSS grew by " << report.max_rss_growth_kib << " KiB";
  }

  void log_report(const char* policy, const LoadReport& r) {
    const auto rate = static_cast<uint64_t>(r.seconds > 0 ? static_cast<double>(r.published) / r.seconds : 0);
    std::cout << "[ it14 ] policy=" << policy << " published=" << r.published << " seconds=" << r.seconds
              << " rate=" << rate << " msg/s rss_before=" << r.rss_before_kib << " KiB rss_after=" << r.rss_after_kib
              << " KiB max_rss_growth=" << r.max_rss_growth_kib << " KiB (bound " << rss_growth_bound_kib()
              << " KiB)" << std::endl;
    RecordProperty("published", std::to_string(r.published));
    RecordProperty("rate_msgs_per_s", std::to_string(rate));
    RecordProperty("rss_before_kib", std::to_string(r.rss_before_kib));
    RecordProperty("rss_after_kib", std::to_string(r.rss_after_kib));
    RecordProperty("max_rss_growth_kib", std::to_string(r.max_rss_growth_kib));
  }

  // Reads the stalled subscriber until every channel reached its published
  // seq (and, for drop, got its notice), or the stream ends.
  void read_stalled(Subscriber& s, bool want_notices) {
    auto done = [&] {
      if (s.by_id.size() != static_cast<size_t>(kChannels)) return false;
      for (auto& [id, seen] : s.by_id) {
        const int c = channel_of(seen.topic);
        if (c < 0) return false;  // a stream without its CHANNEL fails in the checks after
        if (want_notices ? seen.notices == 0 : seen.seq != published_seq[c]) return false;
      }
      return true;
    };
    while (!done()) {
      auto f = stalled.next_message(testing::kDefaultTimeoutMs);
      ASSERT_TRUE(f.has_value()) << "stream ended or stalled before the end";
      s.apply(*f);
    }
  }

  // The broker's own account of its slow consumers, from its log once it
  // stopped: the summary line, and the stalled session's line (zeros if absent).
  struct SlowLog {
    uint64_t episodes = 0, refresh_images = 0, dropped = 0;
    uint64_t session_episodes = 0, session_dropped = 0;
  };
  SlowLog stop_and_read_log() {
    EXPECT_TRUE(broker->stop().clean());
    const std::string log = broker->err();
    SlowLog out;
    unsigned long e = 0, r = 0, d = 0, n = 0;
    if (auto at = log.find("slow consumers: "); at != std::string::npos &&
        std::sscanf(log.c_str() + at, "slow consumers: %lu conflation episodes, %lu refresh images, %lu messages dropped, %lu",
                    &e, &r, &d, &n) == 4) {
      out = {e, r, d, 0, 0};
    }
    if (auto at = log.find("('stalled') was a slow consumer: "); at != std::string::npos &&
        std::sscanf(log.c_str() + at, "('stalled') was a slow consumer: %lu conflation episodes (a channel held back once), "
                    "%lu refresh images, %lu messages dropped", &e, &r, &d) == 3) {
      out.session_episodes = e;
      out.session_dropped = d;
    }
    EXPECT_EQ(log.find("channels conflated"), std::string::npos) << "a count of channels, not of episodes";
    return out;
  }

  std::unique_ptr<BrokerProcess> broker;
  RawClient pub;
  RawClient stalled;
  std::map<int, fields::FieldImage> expected;  // the publisher's state of each channel
  std::vector<uint64_t> published_seq;
  uint64_t published = 0;  // updates sent by the load (not counting the initial images)
};

TEST_F(SlowConsumerTest, ConflateEndsWithTheFinalStateOfEveryChannel) {
  connect_stalled(wire::SlowPolicy::Default);  // the broker default: conflate
  run_load("conflate");
  Subscriber s;
  read_stalled(s, false);
  EXPECT_EQ(s.error_count, 0u) << s.errors.front();  // no UPDATE ever crossed a gap
  uint64_t refreshes = 0;
  for (auto& [id, seen] : s.by_id) {
    const int c = channel_of(seen.topic);
    ASSERT_GE(c, 0) << "channel " << id << " came without its CHANNEL";
    std::string why;
    EXPECT_TRUE(testing::same_fields(seen.image, expected[c], &why)) << topic_of(c) << ": " << why;
    EXPECT_EQ(seen.notices, 0u);
    refreshes += seen.refreshes;
  }
  EXPECT_GT(refreshes, 0u) << "the stalled subscriber never fell behind";
  EXPECT_LT(s.updates + s.stream_images, published) << "nothing was conflated";

  // The log counts episodes (a channel held back once, again after each
  // resume), each ending in one refresh image, and only the stalled session had them.
  stalled.close();
  const SlowLog log = stop_and_read_log();
  EXPECT_GE(log.episodes, refreshes);
  EXPECT_EQ(log.refresh_images, log.episodes);
  EXPECT_EQ(log.dropped, 0u);
  EXPECT_EQ(log.session_episodes, log.episodes);
}

TEST_F(SlowConsumerTest, DropAnnouncesEveryGapWithItsCount) {
  connect_stalled(wire::SlowPolicy::Drop);
  run_load("drop");
  Subscriber s;
  read_stalled(s, true);  // every channel was behind at the end: each gets one notice
  // Now that it caught up, one more message per channel arrives after each notice.
  std::vector<uint8_t> batch;
  const auto first = static_cast<int64_t>(published);
  for (int64_t k = first; k < first + kChannels; ++k) add_update(batch, k);
  ASSERT_TRUE(pub.send_raw(batch));
  read_stalled(s, false);
  EXPECT_EQ(s.error_count, 0u) << s.errors.front();  // each jump equals the announced count
  uint64_t dropped = 0;
  for (auto& [id, seen] : s.by_id) {
    EXPECT_EQ(seen.refreshes, 0u);
    EXPECT_EQ(seen.announced, 0u);
    dropped += seen.dropped;
  }
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(s.updates + dropped, published);

  // The log's count of dropped messages is what the notices announced.
  stalled.close();
  const SlowLog log = stop_and_read_log();
  EXPECT_EQ(log.episodes, 0u);
  EXPECT_EQ(log.dropped, dropped);
  EXPECT_EQ(log.session_dropped, dropped);
}

TEST_F(SlowConsumerTest, DisconnectClosesTheStalledSubscriberOnly) {
  connect_stalled(wire::SlowPolicy::Disconnect);
  run_load("disconnect");
  auto code = stalled.wait_closed_with();
  ASSERT_TRUE(code.has_value()) << "the stalled subscriber was not disconnected";
  if (*code != wire::Code::Ok) {  // the ERROR frame is best effort
    EXPECT_EQ(*code, wire::Code::SlowConsumer);
  }
  EXPECT_TRUE(broker->alive());
}

}  // namespace
}  // namespace tw::it
