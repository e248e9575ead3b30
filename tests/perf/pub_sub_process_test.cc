// `tickwire perf pub` and `perf sub` against a real tickwired, in both start orders.
#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <thread>

#include "perf/perf_process_support.h"
#include "testlib/broker_process.h"
#include "testlib/process.h"

namespace tw::perf::testing {
namespace {

using tw::testing::bin_path;
using tw::testing::BrokerProcess;
using tw::testing::Process;
using tw::testing::run_to_completion;

class PerfPubSub : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(broker.ready()) << broker.err(); }

  std::unique_ptr<Process> start_sub(std::vector<std::string> args) {
    return std::make_unique<Process>(bin_path("tickwire"), perf_args("sub", broker.port(), std::move(args)));
  }
  tw::testing::RunResult run_pub(std::vector<std::string> args) {
    return run_to_completion(bin_path("tickwire"), perf_args("pub", broker.port(), std::move(args)), 30000);
  }

  BrokerProcess broker;
};

TEST_F(PerfPubSub, SubscriberFirstReceivesEveryMessageInOrder) {
  auto sub = start_sub({"PERF/>", "--json", "--idle-exit-ms", "800", "--wait-ms", "20000"});
  ASSERT_TRUE(wait_ready(*sub)) << sub->err();
  auto pub = run_pub({"--topics", "4", "--rate", "2000", "--count", "2000", "--size", "64", "--probe-rate", "100",
                      "--json"});
  ASSERT_TRUE(pub.status.clean()) << pub.err;
  auto pub_line = nlohmann::json::parse(pub.out);
  EXPECT_EQ(pub_line["role"], "pub");
  uint64_t probes = pub_line["probes_sent"];
  EXPECT_GT(probes, 0u);
  EXPECT_EQ(pub_line["sent"], 2000 + probes) << "sent counts load and probes";

  auto exit = sub->wait(20000);
  ASSERT_TRUE(exit && exit->clean()) << sub->err();
  auto lines = json_lines(sub->out());
  auto summary = line_of_type(lines, "summary");
  ASSERT_FALSE(summary.is_null()) << sub->out();
  EXPECT_EQ(summary["received"], 2000 + probes);
  EXPECT_EQ(summary["probes"], probes);
  EXPECT_EQ(summary["gaps"], 0);
  EXPECT_EQ(summary["missing"], 0);
  EXPECT_EQ(summary["dups"], 0);
  EXPECT_EQ(summary["late_joins"], 0);
  EXPECT_EQ(summary["images"], 0) << "new channels' first messages are messages, not baselines";
  EXPECT_EQ(summary["probe_latency_us"].size(), 10u);
  for (const char* key : {"stddev", "under_50us", "over_1ms"}) EXPECT_TRUE(summary["probe_latency_us"].contains(key)) << key;
  EXPECT_GE(count_of_type(lines, "second"), 1u);
}

// Field lists merge into the broker's image; a subscriber joining late gets
// that image, and every update's fields are checked (MISSING FIDS).
TEST_F(PerfPubSub, FieldListsArriveWithEveryFieldRight) {
  auto sub = start_sub({"PERF/>", "--json", "--fields", "20", "--idle-exit-ms", "800", "--wait-ms", "20000"});
  ASSERT_TRUE(wait_ready(*sub)) << sub->err();
  auto pub = run_pub({"--topics", "4", "--rate", "2000", "--count", "1000", "--fields", "20", "--json"});
  ASSERT_TRUE(pub.status.clean()) << pub.err;
  uint64_t sent = nlohmann::json::parse(pub.out)["sent"];
  auto exit = sub->wait(20000);
  ASSERT_TRUE(exit && exit->clean()) << sub->err();
  auto summary = line_of_type(json_lines(sub->out()), "summary");
  ASSERT_FALSE(summary.is_null()) << sub->out();
  EXPECT_EQ(summary["received"], sent);
  EXPECT_EQ(summary["gaps"], 0);
  EXPECT_EQ(summary["malformed"], 0);
  EXPECT_EQ(summary["missing_fids"], 0);
  EXPECT_EQ(summary["wrong_values"], 0);
}

TEST_F(PerfPubSub, FieldListsAreRefusedForOtherTransports) {
  auto pub = run_pub({"--transport", "nats-raw", "--count", "1", "--fields", "3"});
  EXPECT_FALSE(pub.status.clean());
  EXPECT_NE(pub.err.find("native transport"), std::string::npos) << pub.err;
}

TEST_F(PerfPubSub, OneProcessHostsSeveralSubscribersEachWithItsOwnReport) {
  auto sub = start_sub({"PERF/>", "--json", "--connections", "3", "--idle-exit-ms", "800", "--wait-ms", "20000"});
  ASSERT_TRUE(sub->wait_for_out("\"ready\"}\n{\"role\":\"sub\",\"type\":\"ready\"}\n{\"role\":\"sub\",\"type\":\"ready\"}",
                                10000))
      << sub->err();
  auto pub = run_pub({"--topics", "4", "--rate", "2000", "--count", "1000", "--probe-rate", "100", "--json"});
  ASSERT_TRUE(pub.status.clean()) << pub.err;
  uint64_t sent = nlohmann::json::parse(pub.out)["sent"];

  auto exit = sub->wait(20000);
  ASSERT_TRUE(exit && exit->clean()) << sub->err();
  auto lines = json_lines(sub->out());
  ASSERT_EQ(count_of_type(lines, "summary"), 3u) << sub->out();
  for (const auto& line : lines) {
    if (line.value("type", "") != "summary") continue;
    EXPECT_EQ(line["received"], sent);
    EXPECT_EQ(line["gaps"], 0);
    EXPECT_EQ(line["dups"], 0);
  }
  for (const auto& line : lines) {
    if (line.value("type", "") == "second") {
      EXPECT_TRUE(line.contains("conn")) << line.dump();
    }
  }
}

TEST_F(PerfPubSub, PublisherFirstSubscriberJoinsThroughImages) {
  std::vector<std::string> pub_args = perf_args("pub", broker.port(),
      {"--topics", "4", "--rate", "1000", "--count", "2500", "--size", "40", "--json"});
  Process pub(bin_path("tickwire"), pub_args);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));  // let the publisher get going first
  auto sub = start_sub({"PERF/>", "--idle-exit-ms", "800", "--wait-ms", "20000"});
  auto pub_exit = pub.wait(30000);
  ASSERT_TRUE(pub_exit && pub_exit->clean()) << pub.err();
  auto sub_exit = sub->wait(20000);
  ASSERT_TRUE(sub_exit && sub_exit->clean()) << sub->err();

  // Text mode: the column header, per-second lines, then the summary.
  std::string out = sub->out();
  EXPECT_TRUE(std::regex_search(out, std::regex(
      R"(TIME\s+RATE\s+TRANS LOW\s+TRANS AVG\s+TRANS HIGH\s+P50\s+P99\s+P99\.9\s+GAPS\s+MISSING)"))) << out;
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(\n\s+1\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+0\s+0\n)")))
      << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(received (\d+) .*\n\s+gaps (\d+)\s+missing (\d+)\s+dups (\d+)\s+late joins (\d+).*before join (\d+))")))
      << out;
  uint64_t received = std::stoull(m[1]), before_join = std::stoull(m[6]);
  EXPECT_EQ(m[2], "0");
  EXPECT_EQ(m[3], "0");
  EXPECT_EQ(m[4], "0");
  EXPECT_EQ(m[5], "0");
  // Every message was either before the subscriber's images or received after them.
  EXPECT_EQ(received + before_join, 2500u) << out;
  EXPECT_GT(received, 0u);
}

TEST_F(PerfPubSub, SkippedSequenceIsOneGapOneMissing) {
  auto sub = start_sub({"PERF/>", "--json", "--idle-exit-ms", "800", "--wait-ms", "20000"});
  ASSERT_TRUE(wait_ready(*sub)) << sub->err();
  auto pub = run_pub({"--topics", "2", "--rate", "1000", "--count", "200", "--size", "32", "--skip-seq", "5"});
  ASSERT_TRUE(pub.status.clean()) << pub.err;
  auto exit = sub->wait(20000);
  ASSERT_TRUE(exit && exit->clean()) << sub->err();
  auto lines = json_lines(sub->out());
  auto summary = line_of_type(lines, "summary");
  ASSERT_FALSE(summary.is_null()) << sub->out();
  EXPECT_EQ(summary["received"], 200);
  EXPECT_EQ(summary["gaps"], 1);
  EXPECT_EQ(summary["missing"], 1);
  uint64_t gaps_in_seconds = 0;
  for (const auto& j : lines)
    if (j.value("type", "") == "second") gaps_in_seconds += j["gaps"].get<uint64_t>();
  EXPECT_EQ(gaps_in_seconds, 1u) << "per-second lines count the gap once";
}

TEST_F(PerfPubSub, GroupSubscriberGetsOnlyItsTopics) {
  // Topics 0..5 in 3 groups: group 1 holds topics 1 and 4.
  auto sub = start_sub({"--prefix", "GRP", "--topics", "6", "--groups", "3", "--group", "1", "--json",
                        "--idle-exit-ms", "800", "--wait-ms", "20000"});
  ASSERT_TRUE(wait_ready(*sub)) << sub->err();
  auto pub = run_pub({"--prefix", "GRP", "--topics", "6", "--rate", "3000", "--count", "600", "--size", "32"});
  ASSERT_TRUE(pub.status.clean()) << pub.err;
  auto exit = sub->wait(20000);
  ASSERT_TRUE(exit && exit->clean()) << sub->err();
  auto summary = line_of_type(json_lines(sub->out()), "summary");
  ASSERT_FALSE(summary.is_null()) << sub->out();
  EXPECT_EQ(summary["received"], 200);
  EXPECT_EQ(summary["gaps"], 0);
}

TEST_F(PerfPubSub, PublisherWithoutBrokerFailsClearly) {
  uint16_t port = broker.port();
  broker.stop();
  auto pub = run_to_completion(bin_path("tickwire"), perf_args("pub", port, {"--count", "10"}), 20000);
  EXPECT_EQ(pub.status.code, 2);
  EXPECT_NE(pub.err.find("tickwire perf pub"), std::string::npos) << pub.err;
}

TEST_F(PerfPubSub, SubscriberGivesUpWhenNothingArrives) {
  auto sub = start_sub({"PERF/>", "--json", "--wait-ms", "300"});
  auto exit = sub->wait(20000);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->code, 1);
  auto summary = line_of_type(json_lines(sub->out()), "summary");
  ASSERT_FALSE(summary.is_null());
  EXPECT_EQ(summary["received"], 0);
}

}  // namespace
}  // namespace tw::perf::testing
