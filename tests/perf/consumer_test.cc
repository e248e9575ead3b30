#include "perf/consumer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <vector>

#include "perf/probe.h"

namespace tw::perf {
namespace {

class ConsumerTest : public ::testing::Test {
 protected:
  // Feeds one message; latency = now - send.
  void feed(uint32_t publisher, uint32_t topic, uint64_t seq, bool image = false, bool probe = false,
            uint64_t send_ns = 1000, uint64_t now_ns = 3000) {
    std::vector<uint8_t> payload(48);
    encode_probe(ProbeHeader{seq, send_ns, publisher, topic, probe ? kFlagProbe : 0u, 0}, payload);
    consumer.on_message(payload, image, now_ns);
  }
  Consumer consumer;
};

TEST_F(ConsumerTest, InOrderStreamsHaveNoGaps) {
  for (uint64_t seq = 1; seq <= 100; ++seq)
    for (uint32_t topic = 0; topic < 3; ++topic) feed(0, topic, seq);
  const auto& t = consumer.totals();
  EXPECT_EQ(t.received, 300u);
  EXPECT_EQ(t.gaps, 0u);
  EXPECT_EQ(t.missing, 0u);
  EXPECT_EQ(t.dups, 0u);
  EXPECT_EQ(t.publishers, 1u);
  EXPECT_EQ(consumer.latency().count(), 300u);
  EXPECT_EQ(consumer.latency().max(), 2000u);
}

TEST_F(ConsumerTest, SkippedSequencesCountOneGapAndTheMissingMessages) {
  feed(0, 0, 1);
  feed(0, 0, 2);
  feed(0, 0, 6);  // 3, 4, 5 missing
  feed(0, 0, 7);
  feed(0, 0, 9);  // 8 missing
  EXPECT_EQ(consumer.totals().gaps, 2u);
  EXPECT_EQ(consumer.totals().missing, 4u);
  EXPECT_EQ(consumer.totals().received, 5u);
}

TEST_F(ConsumerTest, RepeatedOrOlderSequencesAreDups) {
  feed(0, 0, 1);
  feed(0, 0, 2);
  feed(0, 0, 2);
  feed(0, 0, 1);
  feed(0, 0, 3);
  EXPECT_EQ(consumer.totals().dups, 2u);
  EXPECT_EQ(consumer.totals().gaps, 0u);
  EXPECT_EQ(consumer.totals().received, 5u);
}

TEST_F(ConsumerTest, StreamsArePerPublisherAndTopic) {
  feed(1, 0, 1);
  feed(2, 0, 1);  // same topic, other publisher: its own sequence
  feed(1, 5, 1);
  feed(1, 0, 2);
  feed(2, 0, 2);
  EXPECT_EQ(consumer.totals().gaps, 0u);
  EXPECT_EQ(consumer.totals().dups, 0u);
  EXPECT_EQ(consumer.totals().publishers, 2u);
}

TEST_F(ConsumerTest, InitialImageSetsTheBaselineWithoutCounting) {
  feed(0, 0, 500, /*image=*/true);
  feed(0, 0, 501);
  feed(0, 0, 502);
  EXPECT_EQ(consumer.totals().received, 2u);
  EXPECT_EQ(consumer.totals().images, 1u);
  EXPECT_EQ(consumer.totals().gaps, 0u);
  EXPECT_EQ(consumer.totals().late_joins, 0u);
  EXPECT_EQ(consumer.latency().count(), 2u) << "an image's age is not a latency";
}

// An IMAGE that comes after the subscriber's sync is a message (a channel
// created later starts with one), unless its data was sent before the
// subscriber joined: then it is the cached last value, late.
TEST_F(ConsumerTest, ALateImageOfDataSentBeforeJoiningIsABaseline) {
  consumer.joined(2000);
  std::vector<uint8_t> payload(48);
  encode_probe(ProbeHeader{7, /*send_ns=*/1000, 0, 0, kFlagProbe, 0}, payload);
  consumer.on_message(payload, /*is_initial_image=*/false, /*now_ns=*/50'000, /*is_image=*/true);
  EXPECT_EQ(consumer.totals().images, 1u);
  EXPECT_EQ(consumer.totals().received, 0u);
  EXPECT_EQ(consumer.probe_latency().count(), 0u) << "its age is not a latency";
  encode_probe(ProbeHeader{1, /*send_ns=*/3000, 0, 1, 0, 0}, payload);
  consumer.on_message(payload, false, 4000, /*is_image=*/true);  // a new channel's first message
  EXPECT_EQ(consumer.totals().received, 1u);
}

TEST_F(ConsumerTest, ImageThenGapIsStillAGap) {
  feed(0, 0, 10, true);
  feed(0, 0, 13);
  EXPECT_EQ(consumer.totals().gaps, 1u);
  EXPECT_EQ(consumer.totals().missing, 2u);
}

TEST_F(ConsumerTest, FirstMessageAboveOneIsALateJoinNotAGap) {
  feed(0, 0, 40);
  feed(0, 0, 41);
  EXPECT_EQ(consumer.totals().late_joins, 1u);
  EXPECT_EQ(consumer.totals().gaps, 0u);
  EXPECT_EQ(consumer.totals().received, 2u);
}

TEST_F(ConsumerTest, ProbesHaveTheirOwnHistogram) {
  feed(0, 0, 1, false, false, 1000, 2000);
  feed(0, 0, 2, false, true, 1000, 11000);
  EXPECT_EQ(consumer.totals().probes, 1u);
  EXPECT_EQ(consumer.probe_latency().count(), 1u);
  EXPECT_EQ(consumer.probe_latency().min(), 10000u);
  EXPECT_EQ(consumer.latency().count(), 2u);
}

TEST_F(ConsumerTest, ProbeArrivalsAreKeptUpToTheirCapacityAndTheRestCounted) {
  feed(0, 0, 1, false, true, 1000, 2000);
  EXPECT_TRUE(consumer.probe_arrivals().empty()) << "kept only when asked";
  EXPECT_EQ(consumer.probes_not_logged(), 0u);
  consumer.keep_probe_arrivals(2);
  feed(0, 0, 2, false, false, 1500, 2500);  // load: not a probe
  feed(0, 0, 3, false, true, 4000, 4700);
  feed(0, 0, 4, false, true, 5000, 5900);
  feed(0, 0, 5, false, true, 6000, 6100);
  ASSERT_EQ(consumer.probe_arrivals().size(), 2u);
  EXPECT_EQ(consumer.probe_arrivals()[0].send_ns, 4000u);
  EXPECT_EQ(consumer.probe_arrivals()[0].receive_ns, 4700u);
  EXPECT_EQ(consumer.probe_arrivals()[1].send_ns, 5000u);
  EXPECT_EQ(consumer.probe_arrivals()[1].receive_ns, 5900u);
  EXPECT_EQ(consumer.probes_not_logged(), 1u);
  EXPECT_EQ(consumer.totals().probes, 4u);
}

TEST_F(ConsumerTest, MalformedPayloadsAreCountedNotTrusted) {
  std::vector<uint8_t> short_payload(10);
  consumer.on_message(short_payload, false, 1);
  feed(kMaxPublisherId, 0, 1);
  feed(0, kMaxTopicIndex, 1);
  EXPECT_EQ(consumer.totals().malformed, 3u);
  EXPECT_EQ(consumer.totals().received, 0u);
}

TEST_F(ConsumerTest, ClockSkewGivesZeroLatencyNotAHugeOne) {
  feed(0, 0, 1, false, false, 5000, 4000);
  EXPECT_EQ(consumer.latency().max(), 0u);
}

TEST_F(ConsumerTest, IntervalsResetAndCountTheirOwnGaps) {
  const uint64_t s = 1'000'000'000;
  feed(0, 0, 1, false, false, s - 10'000, s);  // first message at t = 1 s, 10 µs
  feed(0, 0, 3, false, false, s, s + 30'000);  // 30 µs, one missing
  IntervalStats first = consumer.take_interval(2 * s);
  EXPECT_EQ(first.t, 1u);
  EXPECT_EQ(first.messages, 2u);
  EXPECT_DOUBLE_EQ(first.rate, 2.0);
  EXPECT_EQ(first.gaps, 1u);
  EXPECT_EQ(first.missing, 1u);
  EXPECT_NEAR(first.low_us, 10.0, 0.01);
  EXPECT_NEAR(first.high_us, 30.0, 0.03);
  EXPECT_NEAR(first.avg_us, 20.0, 0.02);
  feed(0, 0, 4, false, false, 2 * s, 2 * s + 5'000);
  IntervalStats second = consumer.take_interval(3 * s);
  EXPECT_EQ(second.t, 2u);
  EXPECT_EQ(second.messages, 1u);
  EXPECT_EQ(second.gaps, 0u);
  EXPECT_NEAR(second.high_us, 5.0, 0.01);
  EXPECT_EQ(consumer.totals().gaps, 1u);
  // The whole run's latency spans the closed intervals and the open one.
  feed(0, 0, 5, false, false, 3 * s, 3 * s + 50'000);
  Histogram all = consumer.latency();
  EXPECT_EQ(all.count(), 4u);
  EXPECT_EQ(all.min(), 5'000u);
  EXPECT_EQ(all.max(), 50'000u);
}

TEST_F(ConsumerTest, JsonLinesFollowTheContract) {
  feed(0, 0, 1, false, true);
  feed(0, 0, 3);
  auto second = nlohmann::json::parse(interval_json(consumer.take_interval(consumer.first_ns() + 1'000'000'000)));
  for (const char* key : {"role", "type", "t", "rate", "low_us", "avg_us", "high_us", "p50_us", "p99_us", "p999_us",
                          "gaps", "missing"})
    EXPECT_TRUE(second.contains(key)) << key;
  EXPECT_EQ(second["role"], "sub");
  EXPECT_EQ(second["type"], "second");
  EXPECT_EQ(second["missing"], 1);

  auto summary = nlohmann::json::parse(summary_json(make_summary(consumer, 0.25)));
  EXPECT_EQ(summary["type"], "summary");
  EXPECT_EQ(summary["received"], 2);
  EXPECT_EQ(summary["probes"], 1);
  EXPECT_EQ(summary["gaps"], 1);
  EXPECT_EQ(summary["missing"], 1);
  EXPECT_EQ(summary["dups"], 0);
  EXPECT_DOUBLE_EQ(summary["cpu_s"].get<double>(), 0.25);
  for (const char* group : {"latency_us", "probe_latency_us"})
    for (const char* key : {"min", "mean", "p50", "p90", "p99", "p999", "max"})
      EXPECT_TRUE(summary[group].contains(key)) << group << "." << key;
  EXPECT_DOUBLE_EQ(summary["latency_us"]["max"].get<double>(), 2.0);
  EXPECT_EQ(summary["last_ns"], consumer.last_ns()) << "the last arrival, exact, for perf run's drain";
  EXPECT_GT(consumer.last_ns(), 0u);
}

TEST(ConsumerText, HeaderNamesTheColumns) {
  std::string header = interval_header_text();
  for (const char* col : {"TIME", "RATE", "TRANS LOW", "TRANS AVG", "TRANS HIGH", "P50", "P99", "P99.9", "GAPS",
                          "MISSING"})
    EXPECT_NE(header.find(col), std::string::npos) << col;
}

}  // namespace
}  // namespace tw::perf
