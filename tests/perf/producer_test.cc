#include "perf/producer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace tw::perf {
namespace {

ProbeHeader header_of(const MessageStream& s) { return *decode_probe(s.payload()); }

TEST(MessageStream, RoundRobinOverTopicsWithASequencePerTopic) {
  ProducerOptions o;
  o.topics = 3;
  o.topic_offset = 10;
  o.publisher_id = 4;
  o.payload_size = 100;
  MessageStream s(o);
  EXPECT_EQ(s.payload().size(), 100u);
  for (uint64_t round = 1; round <= 3; ++round) {
    for (uint32_t t = 0; t < 3; ++t) {
      EXPECT_EQ(s.next(false, 77), t);
      ProbeHeader h = header_of(s);
      EXPECT_EQ(h.seq, round);
      EXPECT_EQ(h.topic_index, 10 + t);
      EXPECT_EQ(h.publisher_id, 4u);
      EXPECT_EQ(h.send_ns, 77u);
      EXPECT_FALSE(h.is_probe());
    }
  }
  EXPECT_EQ(s.topic_name(2), "PERF/12");
}

TEST(MessageStream, ProbesShareTheTopicSequenceButHaveTheirOwnRoundRobin) {
  ProducerOptions o;
  o.topics = 2;
  MessageStream s(o);
  s.next(false, 0);                // topic 0 seq 1
  EXPECT_EQ(s.next(true, 0), 0u);  // probes start at topic 0 too
  ProbeHeader h = header_of(s);
  EXPECT_TRUE(h.is_probe());
  EXPECT_EQ(h.seq, 2u);
  EXPECT_EQ(s.next(false, 0), 1u);  // load continues its own round robin
  EXPECT_EQ(header_of(s).seq, 1u);
}

TEST(MessageStream, SkipSeqLeavesOneHoleOnTopicZeroOnly) {
  ProducerOptions o;
  o.topics = 2;
  o.skip_seq = 3;
  MessageStream s(o);
  std::vector<uint64_t> topic0, topic1;
  for (int i = 0; i < 10; ++i) {
    uint32_t t = s.next(false, 0);
    (t == 0 ? topic0 : topic1).push_back(header_of(s).seq);
  }
  EXPECT_EQ(topic0, (std::vector<uint64_t>{1, 2, 4, 5, 6}));
  EXPECT_EQ(topic1, (std::vector<uint64_t>{1, 2, 3, 4, 5}));
}

TEST(MessageStream, PayloadNeverShorterThanTheHeader) {
  ProducerOptions o;
  o.payload_size = 8;
  MessageStream s(o);
  EXPECT_EQ(s.payload().size(), kProbeHeaderSize);
}

TEST(PubResult, JsonFollowsTheContract) {
  ProducerResult r;
  r.sent = 1000;
  r.probes_sent = 10;
  r.seconds = 2.0;
  r.cpu_s = 0.5;
  r.rate = 500;
  r.saturated = true;
  r.stop_ns = 12'345'678'901'234;
  auto j = nlohmann::json::parse(pub_result_json(r, 3));
  EXPECT_EQ(j["role"], "pub");
  EXPECT_EQ(j["id"], 3);
  EXPECT_EQ(j["sent"], 1010) << "load and probes";
  EXPECT_EQ(j["probes_sent"], 10);
  EXPECT_EQ(j["seconds"], 2.0);
  EXPECT_EQ(j["cpu_s"], 0.5);
  EXPECT_EQ(j["rate"], 505) << "load and probes";
  EXPECT_EQ(j["load_rate"], 500) << "the load alone, what --rate offered";
  EXPECT_EQ(j["saturated"], true);
  EXPECT_EQ(j["stop_ns"], 12'345'678'901'234u) << "exact: perf run subtracts it from a subscriber's last_ns";
  EXPECT_EQ(j["probe_wake_late_us"]["count"], 0);
}

// 15,000 load messages and 1,500 probes in 3 s: the line names both rates.
TEST(PubResult, TextNamesTheLoadRateAndTheRateWithProbes) {
  ProducerResult r;
  r.sent = 15'000;
  r.probes_sent = 1'500;
  r.seconds = 3.0;
  r.rate = 5'000;
  EXPECT_EQ(pub_result_text(r),
            "sent 15000 load messages + 1500 probes in 3.000 s: load 5000 msg/s, 5500 msg/s with probes, cpu 0.000 s");
}

TEST(ProbeStamp, AProbeDueWhileThePublisherSleptIsStampedWhenItWoke) {
  ProducerResult r;
  EXPECT_EQ(probe_stamp(1'000'000, 1'070'000, r), 1'070'000u);
  EXPECT_EQ(r.probe_wake_late.count(), 1u);
  EXPECT_EQ(r.probe_wake_late.max(), 70'000u);
  auto j = nlohmann::json::parse(pub_result_json(r, 0));
  EXPECT_EQ(j["probe_wake_late_us"]["count"], 1);
  EXPECT_NEAR(j["probe_wake_late_us"]["max"].get<double>(), 70.0, 0.1);
}

TEST(ProbeStamp, AProbeDueAfterTheWakeKeepsItsIntendedTime) {
  ProducerResult r;
  // Fell due while the publisher was busy sending (or held by back pressure):
  // that delay is the system's, so the intended time stays.
  EXPECT_EQ(probe_stamp(2'000'000, 1'900'000, r), 2'000'000u);
  EXPECT_EQ(probe_stamp(2'000'000, 2'000'000, r), 2'000'000u);
  EXPECT_EQ(r.probe_wake_late.count(), 0u);
}

}  // namespace
}  // namespace tw::perf
