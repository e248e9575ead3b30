// The orchestrator's pure parts: fan-out plan, rate search, /proc parsing,
// JSON line folding, verdicts, run summaries and the result.json schema.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "perf/run/broker.h"
#include "perf/run/child_process.h"
#include "perf/run/cpu_timeline.h"
#include "perf/run/fanout.h"
#include "perf/run/orchestrator.h"
#include "perf/run/proc_stats.h"
#include "perf/run/rate_search.h"
#include "perf/run/report.h"

namespace tw::perf::run {
namespace {

// Topics subscriber `index` receives, reading back the arguments it is given.
std::set<int> topics_received(const FanoutPlan& plan, int index) {
  std::vector<std::string> args = subscriber_topic_args(plan, index, "PERF");
  std::set<int> topics;
  if (args.size() == 1) {
    EXPECT_EQ(args[0], "PERF/>");
    for (int t = 0; t < plan.topics; ++t) topics.insert(t);
    return topics;
  }
  int groups = 0, group = -1, count = 0;
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    if (args[i] == "--groups") groups = std::stoi(args[i + 1]);
    if (args[i] == "--group") group = std::stoi(args[i + 1]);
    if (args[i] == "--topics") count = std::stoi(args[i + 1]);
  }
  for (int t = 0; t < count; ++t)
    if (t % groups == group) topics.insert(t);
  return topics;
}

TEST(Fanout, EveryTopicReachesExactlyFanoutSubscribers) {
  struct Case { int subscribers, fanout, topics; };
  for (Case c : {Case{5, 5, 1}, Case{20, 5, 100}, Case{5, 5, 1000}, Case{6, 2, 7}, Case{4, 1, 4}, Case{1, 1, 1}}) {
    auto plan = plan_fanout(c.subscribers, c.fanout, c.topics);
    ASSERT_TRUE(plan) << plan.error().message;
    std::vector<int> reach(static_cast<size_t>(c.topics), 0);
    for (int s = 0; s < c.subscribers; ++s) {
      std::set<int> topics = topics_received(*plan, s);
      EXPECT_FALSE(topics.empty()) << "subscriber " << s << " would receive nothing";
      for (int t : topics) ++reach[static_cast<size_t>(t)];
    }
    for (int t = 0; t < c.topics; ++t) {
      EXPECT_EQ(reach[static_cast<size_t>(t)], c.fanout) << "topic " << t;
      EXPECT_EQ(subscribers_of_topic(*plan, t), c.fanout);
    }
  }
}

TEST(Fanout, SubscriberProcessesHostWholeGroups) {
  auto plan = plan_fanout(6, 3, 10);  // 2 groups of 3
  ASSERT_TRUE(plan);
  EXPECT_EQ(*subscriber_processes(*plan, 1), 6);
  EXPECT_EQ(*subscriber_processes(*plan, 3), 2);
  EXPECT_FALSE(subscriber_processes(*plan, 2)) << "3 members do not fill processes of 2";
  EXPECT_FALSE(subscriber_processes(*plan, 0));
  // Process p hosts group p % G, so each group gets F / K processes.
  EXPECT_EQ(group_of_subscriber(*plan, 0), 0);
  EXPECT_EQ(group_of_subscriber(*plan, 1), 1);
}

TEST(Fanout, RejectsImpossiblePlans) {
  EXPECT_FALSE(plan_fanout(5, 2, 10));   // 5 is not a multiple of 2
  EXPECT_FALSE(plan_fanout(20, 5, 3));   // 4 groups need 4 topics
  EXPECT_FALSE(plan_fanout(0, 1, 1));
}

TEST(Fanout, PublishersSplitTopicsWithoutOverlap) {
  auto ranges = split_topics(100, 3);
  ASSERT_TRUE(ranges);
  int next = 0;
  for (const TopicRange& r : *ranges) {
    EXPECT_EQ(r.offset, next);
    EXPECT_GE(r.count, 33);
    next += r.count;
  }
  EXPECT_EQ(next, 100);
  EXPECT_FALSE(split_topics(2, 4));
}

// A fake broker that loses messages above `limit` msg/s, and a load generator
// that cannot go beyond `generator_limit`.
struct FakeBroker {
  double limit;
  double generator_limit = 1e12;
  std::vector<double> tried;
  Verdict operator()(double rate, SearchPhase) {
    tried.push_back(rate);
    if (rate > generator_limit) return Verdict::Saturated;
    return rate <= limit ? Verdict::Ok : Verdict::Lossy;
  }
};

TEST(RateSearch, EscalatesBisectsAndConfirmsBelowTheLimit) {
  FakeBroker broker{300'000};
  SearchConfig config;
  SearchResult result = search_max_rate(config, std::ref(broker));
  ASSERT_TRUE(result.found);
  EXPECT_FALSE(result.saturated);
  EXPECT_LE(result.rate, 300'000);
  EXPECT_GE(result.rate, 200'000);  // last escalation success; bisection only raises it
  EXPECT_EQ(broker.tried[0], 50'000);
  EXPECT_EQ(broker.tried[1], 100'000);
  EXPECT_EQ(broker.tried[2], 200'000);
  EXPECT_EQ(broker.tried[3], 400'000);
  // 4 escalations, 4 bisections, 3 confirmations.
  EXPECT_EQ(result.steps.size(), 11u);
  for (size_t i = 8; i < 11; ++i) {
    EXPECT_EQ(result.steps[i].phase, SearchPhase::Confirm);
    EXPECT_EQ(result.steps[i].rate, result.rate);
  }
}

TEST(RateSearch, ComesDownWhenTheFirstRateFails) {
  FakeBroker broker{20'000};
  SearchResult result = search_max_rate(SearchConfig{}, std::ref(broker));
  ASSERT_TRUE(result.found);
  EXPECT_LE(result.rate, 20'000);
  EXPECT_GE(result.rate, 12'500);
}

TEST(RateSearch, ConfirmationFailureStepsDownTenPercent) {
  int confirm_calls = 0;
  TrialFunction flaky = [&](double rate, SearchPhase phase) {
    if (phase != SearchPhase::Confirm) return rate <= 100'000 ? Verdict::Ok : Verdict::Lossy;
    ++confirm_calls;
    return confirm_calls == 2 ? Verdict::Lossy : Verdict::Ok;  // second confirmation run fails once
  };
  SearchConfig config;
  config.bisect_steps = 0;
  SearchResult result = search_max_rate(config, flaky);
  ASSERT_TRUE(result.found);
  EXPECT_DOUBLE_EQ(result.rate, 90'000);
  EXPECT_EQ(confirm_calls, 2 + 3);
}

TEST(RateSearch, ReportsASaturatedLoadGenerator) {
  FakeBroker broker{1e9, 150'000};
  SearchResult result = search_max_rate(SearchConfig{}, std::ref(broker));
  ASSERT_TRUE(result.found);
  EXPECT_TRUE(result.saturated);
  EXPECT_LE(result.rate, 150'000);
}

TEST(RateSearch, StopsAtMaxRate) {
  FakeBroker broker{1e9};
  SearchConfig config;
  config.start_rate = 1000;
  config.max_rate = 2000;
  config.confirm_runs = 1;
  SearchResult result = search_max_rate(config, std::ref(broker));
  ASSERT_TRUE(result.found);
  EXPECT_EQ(result.rate, 2000);
  EXPECT_EQ(result.steps.size(), 3u);
}

TEST(RateSearch, NothingPasses) {
  FakeBroker broker{0};
  SearchResult result = search_max_rate(SearchConfig{}, std::ref(broker));
  EXPECT_FALSE(result.found);
}

TEST(ProcStat, ParsesUtimeAndStimeAfterAnAwkwardName) {
  std::string line = "4242 (we(ird) n) ame) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 567 0 0 20 0 1 0 99 0 0";
  auto ticks = parse_proc_stat(line);
  ASSERT_TRUE(ticks) << ticks.error().message;
  EXPECT_EQ(ticks->utime, 1234u);
  EXPECT_EQ(ticks->stime, 567u);
}

TEST(ProcStat, RejectsMalformedText) {
  EXPECT_FALSE(parse_proc_stat("no parenthesis here"));
  EXPECT_FALSE(parse_proc_stat("1 (x) S 1 2 3"));
  EXPECT_FALSE(parse_proc_stat("1 (x) S 1 1 1 0 -1 0 0 0 0 0 12x 5"));
}

TEST(ProcStat, ParsesPeakRss) {
  auto kib = parse_peak_rss_kib("Name:\tx\nVmPeak:\t  9000 kB\nVmHWM:\t   5120 kB\nVmRSS:\t 4000 kB\n");
  ASSERT_TRUE(kib) << kib.error().message;
  EXPECT_EQ(*kib, 5120u);
  EXPECT_FALSE(parse_peak_rss_kib("Name:\tx\nVmRSS:\t 4000 kB\n"));
  EXPECT_FALSE(parse_peak_rss_kib("\nVmHWM:\t 12x kB\n"));
}

TEST(ProcStat, ReadsOwnPeakRssAndThreads) {
  auto kib = peak_rss_kib(getpid());
  ASSERT_TRUE(kib) << kib.error().message;
  EXPECT_GT(*kib, 0u);
  EXPECT_FALSE(thread_cpu_seconds(getpid()).empty());
}

TEST(ProcStat, ReadsOwnCpuTime) {
  volatile unsigned long spin = 0;
  for (unsigned long i = 0; i < 50'000'000; ++i) spin = spin + i;
  auto seconds = process_cpu_seconds(getpid());
  ASSERT_TRUE(seconds) << seconds.error().message;
  EXPECT_GE(*seconds, 0.0);
  EXPECT_FALSE(process_cpu_seconds(-5));
}

TEST(ProcStat, MachineTicksAndStealFromProcStat) {
  auto before = parse_machine_ticks("cpu  100 5 50 800 10 0 5 30 7 0\ncpu0 1 2 3 4 5 6 7 8\n");
  ASSERT_TRUE(before);
  EXPECT_EQ(before->total, 1000u) << "guest time is inside user: not added again";
  EXPECT_EQ(before->steal, 30u);
  auto after = parse_machine_ticks("cpu  200 5 100 1500 10 0 5 180 9 0\n");
  ASSERT_TRUE(after);
  EXPECT_DOUBLE_EQ(steal_percent(before, after), 15.0);  // 150 of 1000 ticks
  EXPECT_EQ(steal_percent(after, before), -1) << "time never runs backwards";
  EXPECT_FALSE(parse_machine_ticks("intr 1 2 3"));
  EXPECT_FALSE(parse_machine_ticks("cpu  1 2 3"));
  EXPECT_TRUE(machine_ticks()) << "this machine's /proc/stat";
}

TEST(ProcStat, CpuModelFromCpuinfo) {
  EXPECT_EQ(parse_cpu_model("processor\t: 0\nvendor_id\t: X\nmodel name\t: Fancy CPU @ 3GHz\nflags : a\n"),
            "Fancy CPU @ 3GHz");
  EXPECT_EQ(parse_cpu_model("processor : 0\n"), "");
  EXPECT_GT(machine_info().cpus, 0);
}

// perf run compares achieved with offered, and offered is the load: a
// publisher's probes (sent besides the load) must not inflate achieved.
TEST(TrialJudging, AchievedRateIsTheLoadWithoutProbes) {
  TrialResult r;
  for (int p = 0; p < 2; ++p)
    EXPECT_TRUE(absorb_json_line(R"({"role":"pub","id":)" + std::to_string(p) +
                                     R"(,"sent":16500,"probes_sent":1500,"seconds":3,"cpu_s":0.1,"rate":5500,)"
                                     R"("load_rate":5000,"saturated":false,"stop_ns":1})",
                                 r));
  EXPECT_DOUBLE_EQ(r.achieved_rate, 10'000.0);
  EXPECT_EQ(r.sent, 33'000u) << "sent still counts every message, as the subscribers' received does";
}

TEST(TrialJudging, FoldsChildLinesAndJudges) {
  TrialResult r;
  EXPECT_TRUE(absorb_json_line(R"({"role":"sub","type":"ready"})", r));
  EXPECT_TRUE(absorb_json_line(R"({"role":"pub","id":0,"sent":100,"probes_sent":0,"seconds":1,"cpu_s":0.1,"rate":100,"saturated":false,"stop_ns":5000000000})", r));
  for (int s = 0; s < 2; ++s)
    EXPECT_TRUE(absorb_json_line(
        R"({"role":"sub","type":"summary","received":100,"probes":10,"gaps":0,"missing":0,"dups":0,"cpu_s":0.1,)"
        R"("latency_us":{"min":1,"mean":2,"p50":2,"p90":3,"p99":4,"p999":5,"max":6},)"
        R"("last_ns":)" + std::to_string(5'001'000'000 + 1'000'000 * s) + R"(,)"
        R"("probe_latency_us":{"min":1,"mean":2,"p50":2,"p90":3,"p99":)" + std::to_string(4 + s) +
            R"(,"p999":5,"max":6}})", r));
  EXPECT_FALSE(absorb_json_line("not json", r));
  judge_trial(r, 2, 50);
  EXPECT_EQ(r.expected, 200u);
  EXPECT_EQ(r.received, 200u);
  EXPECT_EQ(r.probe_latency.p99, 5);  // the worst subscriber
  EXPECT_EQ(r.last_arrival_ns, 5'002'000'000u) << "the last subscriber's";
  EXPECT_DOUBLE_EQ(r.drain_ms(), 2.0);
  EXPECT_EQ(r.verdict, Verdict::Ok);

  r.gaps = 1;
  judge_trial(r, 2, 50);
  EXPECT_EQ(r.verdict, Verdict::Lossy);
  r.gaps = 0;
  judge_trial(r, 3, 50);  // 300 expected, 200 received
  EXPECT_EQ(r.verdict, Verdict::Lossy);
  EXPECT_EQ(r.lost(), 100u);
  judge_trial(r, 2, 1.5);  // everything arrived, 2 ms after the stop
  EXPECT_EQ(r.verdict, Verdict::Backlogged);
  r.saturated = true;
  judge_trial(r, 2, 50);
  EXPECT_EQ(r.verdict, Verdict::Saturated);
}

TEST(TrialJudging, TheLastArrivalBeforeThePublishersLoopEndedIsNoDrain) {
  TrialResult r;
  r.publishers_stop_ns = 2'000'000;
  r.last_arrival_ns = 1'999'000;
  EXPECT_EQ(r.drain_ms(), 0);
  r.last_arrival_ns = 0;
  EXPECT_EQ(r.drain_ms(), -1) << "unknown, not zero";
}

TEST(TrialJudging, ABrokerStillBusyPastTheBoundIsBacklogged) {
  // Everything arrived in time, yet the broker kept working: a backlog the
  // subscribers cannot see (e.g. queued for a connection that is going away).
  TrialResult r;
  r.sent = 1000;
  r.received = 1000;
  r.publishers_stop_ns = 1'000'000'000;
  r.last_arrival_ns = 1'001'000'000;
  r.broker_cpu_past_bound_s = 0.5;
  judge_trial(r, 1, 100);
  EXPECT_TRUE(r.broker_busy_past_bound());
  EXPECT_EQ(r.verdict, Verdict::Backlogged);
  r.broker_cpu_past_bound_s = 0.01;  // an idle broker's heartbeats and timers
  judge_trial(r, 1, 100);
  EXPECT_EQ(r.verdict, Verdict::Ok);
}

TEST(DrainBound, LargerOfFiftyMillisecondsAndTwoPercentOfTheTrial) {
  EXPECT_EQ(default_drain_bound_ms(1), 50);
  EXPECT_EQ(default_drain_bound_ms(2.5), 50);
  EXPECT_EQ(default_drain_bound_ms(5), 100);
  EXPECT_EQ(default_drain_bound_ms(30), 600);
  TrialSpec spec;
  spec.seconds = 10;
  EXPECT_EQ(drain_bound_ms(spec), 200);
  spec.drain_bound_ms = 30;
  EXPECT_EQ(drain_bound_ms(spec), 30) << "--drain-bound-ms overrides";
}

TEST(CpuTimeline, ReadsTheCpuSpentBetweenTwoTimesBetweenSamples) {
  CpuTimeline cpu;
  EXPECT_EQ(cpu.between(0, 10), -1);
  cpu.add(1'000, 2.0);
  EXPECT_EQ(cpu.between(0, 10'000), -1) << "one sample spans nothing";
  cpu.add(2'000, 3.0);
  cpu.add(1'500, 9.0);  // out of order: ignored
  cpu.add(4'000, 3.0);  // idle from 2,000 on
  EXPECT_DOUBLE_EQ(cpu.between(1'000, 4'000), 1.0);
  EXPECT_DOUBLE_EQ(cpu.between(1'500, 2'000), 0.5);
  EXPECT_DOUBLE_EQ(cpu.between(2'500, 4'000), 0.0);
  EXPECT_DOUBLE_EQ(cpu.between(0, 1'250), 0.25) << "clamped to the first sample";
  EXPECT_DOUBLE_EQ(cpu.between(1'750, 9'000), 0.25) << "clamped to the last sample";
  EXPECT_EQ(cpu.between(3'000, 2'000), -1);
}

TEST(TrialJudging, KeepsThePublishersTimerLatenessApart) {
  TrialResult r;
  for (int p = 0; p < 2; ++p)
    EXPECT_TRUE(absorb_json_line(R"({"role":"pub","id":)" + std::to_string(p) +
                                     R"(,"sent":10,"probes_sent":5,"probe_wake_late_us":{"count":3,"p50":)" +
                                     std::to_string(20 + 10 * p) + R"(,"p99":)" + std::to_string(90 - 10 * p) +
                                     R"(,"max":100}})",
                                 r));
  EXPECT_EQ(r.probes_woken_late, 6u);
  EXPECT_EQ(r.wake_late_p50_us, 30);  // the worst publisher's
  EXPECT_EQ(r.wake_late_p99_us, 90);
  EXPECT_EQ(to_json(r)["probe_wake_late"]["count"], 6);
}

TEST(Summaries, MedianAndSpreadPerStatistic) {
  LatencyPoint point;
  for (double p99 : {30.0, 10.0, 20.0}) {
    LatencySummary run;
    run.p99 = p99;
    point.runs.push_back(run);
  }
  summarize_runs(point);
  EXPECT_EQ(point.median.p99, 20);
  EXPECT_EQ(point.low.p99, 10);
  EXPECT_EQ(point.high.p99, 30);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
}

// A trial runner standing in for processes: clean below 80K msg/s.
Result<TrialResult> fake_runner(const TrialSpec& spec) {
  TrialResult r;
  r.offered_rate = spec.rate;
  r.sent = static_cast<unsigned long long>(spec.rate * spec.seconds);
  r.received = spec.rate <= 80'000 ? r.sent * static_cast<unsigned long long>(spec.fanout) : r.sent;
  r.achieved_rate = spec.rate;
  r.publishers_stop_ns = 1'000'000'000;
  r.last_arrival_ns = 1'000'400'000;  // 0.4 ms later
  r.broker_cpu_s = 0.5;
  r.latency = {1, 2, 3, 4, spec.rate / 10'000, spec.rate / 5000, 100};
  r.probe_latency = {1, 2, 3, 4, spec.rate / 1000, spec.rate / 500, 100};
  judge_trial(r, spec.fanout, drain_bound_ms(spec));
  return r;
}

// A stand-in broker: it takes in everything published, sends each subscriber
// at most `output_rate` msg/s and queues the rest, up to `queue` messages per
// subscriber (then drops), as a broker with tens of MiB of output buffer per
// connection does. It plays a trial as perf pub and perf sub would report it,
// as their JSON lines, which the orchestrator folds and judges as it does the
// real ones'. Every subscriber receives every message (fan-out = subscribers).
struct QueueingBroker {
  double output_rate;
  double queue = 1e15;

  Result<TrialResult> operator()(const TrialSpec& spec) const {
    const unsigned long long start_ns = 1'000'000'000'000;
    const unsigned long long stop_ns = start_ns + static_cast<unsigned long long>(spec.seconds * 1e9);
    double sent = std::round(spec.rate * spec.seconds);
    auto count = [](double messages) { return static_cast<unsigned long long>(std::llround(messages)); };
    double backlog = std::max(0.0, sent - output_rate * spec.seconds);  // queued when the publishers stop
    double dropped = std::max(0.0, backlog - queue);
    double drain_s = (backlog - dropped) / output_rate;
    TrialResult r;
    r.offered_rate = spec.rate;
    absorb_json_line(nlohmann::json{{"role", "pub"}, {"id", 0}, {"sent", count(sent)}, {"rate", spec.rate},
                                    {"saturated", false}, {"stop_ns", stop_ns}}
                         .dump(),
                     r);
    // A message that waited in the queue arrives that much late: p99 ~ the
    // longest wait; a broker that keeps up delivers in 50 us.
    double p99_us = backlog > 0 ? 0.99 * drain_s * 1e6 : 50;
    unsigned long long last_ns = stop_ns + static_cast<unsigned long long>(std::max(drain_s, 50e-6) * 1e9);
    for (int s = 0; s < spec.subscribers; ++s)
      absorb_json_line(nlohmann::json{{"role", "sub"}, {"type", "summary"}, {"received", count(sent - dropped)},
                                      {"gaps", 0}, {"missing", 0}, {"last_ns", last_ns},
                                      {"latency_us", {{"p50", 30}, {"p99", p99_us}, {"max", p99_us}}}}
                           .dump(),
                       r);
    judge_trial(r, spec.fanout, drain_bound_ms(spec));
    return r;
  }
};

TrialSpec five_second_trial(double rate) {
  TrialSpec spec;
  spec.rate = rate;
  spec.seconds = 5;  // drain bound 100 ms
  spec.subscribers = 2;
  spec.fanout = 2;
  return spec;
}

TEST(DrainBound, ABrokerThatDrainsSlowlyFailsEvenWithNothingLost) {
  // Takes 100K msg/s in, sends 83,333 out: 5 s of publishing leave a queue
  // that drains for 1 s, ten times the bound.
  auto slow = QueueingBroker{100'000.0 * 5 / 6}(five_second_trial(100'000));
  ASSERT_TRUE(slow);
  EXPECT_EQ(slow->lost(), 0u);
  EXPECT_EQ(slow->gaps + slow->missing, 0u);
  EXPECT_EQ(slow->received, slow->expected) << "everything arrived, eventually";
  EXPECT_NEAR(slow->drain_ms(), 1000, 1);
  EXPECT_EQ(slow->drain_bound_ms, 100);
  EXPECT_EQ(slow->verdict, Verdict::Backlogged);
  EXPECT_EQ(to_json(*slow)["verdict"], "backlogged");
}

TEST(DrainBound, ABrokerThatKeepsUpPasses) {
  auto fast = QueueingBroker{200'000}(five_second_trial(100'000));
  ASSERT_TRUE(fast);
  EXPECT_EQ(fast->lost(), 0u);
  EXPECT_LE(fast->drain_ms(), fast->drain_bound_ms);
  EXPECT_EQ(fast->verdict, Verdict::Ok);
  EXPECT_EQ(to_json(*fast)["drain_ms"], fast->drain_ms());
}

TEST(DrainBound, ThroughputSearchFindsWhatTheBrokerSendsNotWhatItBuffers) {
  // With an unbounded queue every rate delivers everything eventually: zero
  // loss alone would call the highest rate tried sustainable.
  RunOptions options;
  options.mode = Mode::Throughput;
  options.trial = five_second_trial(50'000);
  options.runs = 2;
  options.max_rate = 3'200'000;
  auto report = run_measurement(options, QueueingBroker{300'000});
  ASSERT_TRUE(report);
  ASSERT_TRUE(report->throughput.search.found);
  // Backlog at the stop may drain within 100 ms: at most 2 % over 300K.
  EXPECT_LE(report->throughput.search.rate, 306'000);
  EXPECT_GT(report->throughput.search.rate, 200'000);
  for (const TrialRecord& trial : report->trials) {
    EXPECT_EQ(trial.result.lost(), 0u);
    EXPECT_EQ(trial.result.verdict == Verdict::Ok, trial.result.drain_ms() <= 100) << trial.result.offered_rate;
  }
  EXPECT_LE(report->throughput.drain_ms, 100);
  EXPECT_GE(report->throughput.drain_ms, 0);
  EXPECT_GT(report->throughput.latency_p99_us, 0);
}

TEST(RateSearch, ABackloggedTrialIsAFailure) {
  TrialFunction backlogged_above_100k = [](double rate, SearchPhase) {
    return rate <= 100'000 ? Verdict::Ok : Verdict::Backlogged;
  };
  SearchResult result = search_max_rate(SearchConfig{}, backlogged_above_100k);
  ASSERT_TRUE(result.found);
  EXPECT_LE(result.rate, 100'000);
  EXPECT_FALSE(result.saturated);
  EXPECT_STREQ(verdict_name(Verdict::Backlogged), "backlogged");
}

TEST(Modes, SweepMeasuresEveryRateRunsTimes) {
  RunOptions options;
  options.mode = Mode::Sweep;
  options.rates = {10'000, 50'000};
  options.runs = 2;
  options.trial.fanout = 5;
  auto report = run_measurement(options, fake_runner);
  ASSERT_TRUE(report);
  EXPECT_EQ(report->trials.size(), 4u);
  ASSERT_EQ(report->latency.size(), 2u);
  EXPECT_EQ(report->latency[1].median.p99, 50);
  EXPECT_TRUE(report->latency[1].clean);
}

// A runner whose every run is ok (nothing lost) but slow: probes at `probe_p99` us, all messages at `all_p99` us.
TrialRunner slow_runner(double probe_p99, double all_p99) {
  return [=](const TrialSpec& spec) -> Result<TrialResult> {
    auto r = fake_runner(spec);
    r->probe_latency.p99 = probe_p99;
    r->latency.p99 = all_p99;
    r->probes_received = 10;
    return r;
  };
}

TEST(Clean, ALatencyPointOverTheP99BoundIsNotCleanThoughNothingWasLost) {
  RunOptions options;
  options.mode = Mode::Latency;
  options.trial.rate = 10'000;
  options.runs = 2;
  auto slow = run_measurement(options, slow_runner(10'000, 10'000));  // 10 ms
  ASSERT_TRUE(slow);
  ASSERT_EQ(slow->latency.size(), 1u);
  for (const TrialRecord& trial : slow->trials) EXPECT_EQ(trial.result.verdict, Verdict::Ok);
  EXPECT_FALSE(slow->latency[0].clean);
  EXPECT_EQ(slow->latency[0].not_clean, "probe p99 10000 us over the 1000 us bound");
  const std::string table = report_table(*slow);
  EXPECT_NE(table.find("  NO "), std::string::npos) << table;
  EXPECT_NE(table.find("not clean at 10000 msg/s: probe p99 10000 us over the 1000 us bound"), std::string::npos)
      << table;
  const nlohmann::json point = report_json(*slow, RunContext{})["summary"]["points"][0];
  EXPECT_FALSE(point["clean"].get<bool>());
  EXPECT_EQ(point["p99_bound_us"], 1000);

  // Probes on time but the load queued: not clean either; the load's batching wait is allowed for.
  auto queued = run_measurement(options, slow_runner(100, 5'000));
  ASSERT_TRUE(queued);
  EXPECT_EQ(queued->latency[0].not_clean, "p99 of all messages 5000 us over the 1000 us bound");
  options.trial.load_batch_us = 200;
  auto batched = run_measurement(options, slow_runner(100, 1'150));
  ASSERT_TRUE(batched);
  EXPECT_TRUE(batched->latency[0].clean) << batched->latency[0].not_clean;

  options.p99_bound_us = 20'000;  // --p99-bound-us
  auto lenient = run_measurement(options, slow_runner(10'000, 10'000));
  ASSERT_TRUE(lenient);
  EXPECT_TRUE(lenient->latency[0].clean) << lenient->latency[0].not_clean;
}

// The trials table shows both p99s under labels that say what each measures.
TEST(Report, TheTwoP99sAreLabelledApart) {
  RunOptions options;
  options.mode = Mode::Latency;
  options.trial.rate = 10'000;
  options.runs = 1;
  auto report = run_measurement(options, slow_runner(150, 2'400));
  ASSERT_TRUE(report);
  const std::string table = report_table(*report);
  EXPECT_NE(table.find("p99 all us  p99 probe us"), std::string::npos) << table;
  EXPECT_EQ(table.find("   p99 us "), std::string::npos) << table;
  EXPECT_NE(table.find("2400.0         150.0"), std::string::npos) << table;
}

TEST(Modes, ThroughputResultJsonSchema) {
  RunOptions options;
  options.mode = Mode::Throughput;
  options.trial.rate = 50'000;
  options.trial.fanout = 5;
  options.runs = 2;
  auto report = run_measurement(options, fake_runner);
  ASSERT_TRUE(report);
  RunContext context{"tickwire perf run --mode throughput", "2024-01-01T00:00:00Z", machine_info()};
  nlohmann::json j = report_json(*report, context);
  for (const char* key : {"tool", "schema", "command", "date", "machine", "options", "trials", "summary"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["options"]["mode"], "throughput");
  EXPECT_EQ(j["trials"].size(), report->trials.size());
  for (const auto& trial : j["trials"])
    for (const char* key : {"phase", "offered_rate", "sent", "received", "lost", "gaps", "verdict", "broker_cpu_s",
                            "drain_ms", "drain_bound_ms", "broker_cpu_after_stop_s", "broker_cpu_past_bound_s"})
      EXPECT_TRUE(trial.contains(key)) << key;
  EXPECT_TRUE(j["summary"]["found"].get<bool>());
  double rate = j["summary"]["rate"];
  EXPECT_LE(rate, 80'000);
  EXPECT_GE(rate, 50'000);
  EXPECT_EQ(j["summary"]["limited_by"], "broker");
  EXPECT_EQ(j["summary"]["confirmed_rates"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["summary"]["drain_ms"].get<double>(), 0.4);
  EXPECT_EQ(j["summary"]["drain_bound_ms"], 50) << "2 s trials: the 50 ms floor";
  EXPECT_DOUBLE_EQ(j["summary"]["latency_p99_us"].get<double>(), rate / 10'000);
  std::string table = report_table(*report);
  EXPECT_NE(table.find("Max sustainable rate"), std::string::npos);
  EXPECT_NE(table.find("drain ms"), std::string::npos);
  EXPECT_NE(table.find("Drain after the publishers stopped: 0.4 ms at worst (bound 50 ms)"), std::string::npos)
      << table;
  EXPECT_NE(table.find("Latency under that load: p99"), std::string::npos) << table;
}

TEST(Modes, RunnerErrorsStopTheMeasurement) {
  RunOptions options;
  options.mode = Mode::Latency;
  auto report = run_measurement(options, [](const TrialSpec&) -> Result<TrialResult> { return Error{"boom"}; });
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().message, "boom");
}

TEST(Children, CapturesLinesAndExitStatus) {
  auto child = Child::spawn({{"/bin/sh", "-c", "echo one; echo two; exit 3"}, "", true});
  ASSERT_TRUE(child) << child.error().message;
  std::vector<Child*> live{&*child};
  std::vector<std::string> lines;
  while (child->stdout_fd() >= 0) {
    pump_children(live, 100);
    for (auto& line : child->take_lines()) lines.push_back(line);
  }
  while (!child->try_reap()) pump_children(live, 10);
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two"}));
  EXPECT_TRUE(WIFEXITED(child->exit_status()));
  EXPECT_EQ(WEXITSTATUS(child->exit_status()), 3);
}

TEST(Children, TerminateEndsAHangingChild) {
  auto child = Child::spawn({{"/bin/sleep", "60"}, "", true});
  ASSERT_TRUE(child);
  child->terminate(1000);
  EXPECT_TRUE(child->exited());
}

TEST(Broker, PortSubstitution) {
  EXPECT_EQ(substitute_port("nats-server -a 127.0.0.1 -p {port} # {port}", 4222),
            "nats-server -a 127.0.0.1 -p 4222 # 4222");
  auto port = pick_free_port();
  ASSERT_TRUE(port);
  EXPECT_GT(*port, 0);
}

}  // namespace
}  // namespace tw::perf::run
