// The three measurements of `tickwire perf run` over a trial runner
// (docs/perf.md, "Orchestrator"). The runner is injected so the modes can be
// driven without processes in tests; in the tool it is run_trial.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tickwire/base/result.h"
#include "perf/run/rate_search.h"
#include "perf/run/trial.h"

namespace tw::perf::run {

enum class Mode { Throughput, Latency, Sweep };
inline constexpr double kDefaultP99BoundUs = 1000;
Result<Mode> parse_mode(const std::string& name);
const char* mode_name(Mode mode);

struct RunOptions {
  Mode mode = Mode::Throughput;
  TrialSpec trial;                // rate is the start rate (throughput) or background rate (latency)
  std::vector<double> rates;      // sweep
  int runs = 3;                   // latency/sweep repetitions; throughput confirmation runs
  int bisect_steps = 4;
  double max_rate = 50'000'000;   // throughput: do not escalate beyond this
  std::string label;
  // Latency and sweep: a point is clean only when every run's p99 is within
  // this bound (docs/perf.md, "Clean"); the default is five times the 200 us
  // p99 goal of docs/benchmarks.md: beyond it, messages queued somewhere.
  double p99_bound_us = kDefaultP99BoundUs;
};

using TrialRunner = std::function<Result<TrialResult>(const TrialSpec&)>;

// One trial as recorded in result.json.
struct TrialRecord {
  std::string phase;  // escalate, bisect, confirm, latency
  TrialResult result;
};

// Latency at one background rate: per-run probe latency, median and spread.
struct LatencyPoint {
  double rate = 0;
  std::vector<LatencySummary> runs;
  LatencySummary median, low, high;  // per statistic: median, min and max over runs
  // Clean: every run ok (nothing lost, no saturated publisher, not
  // backlogged) and within the p99 bound; else why not, for the first run that was not.
  bool clean = true;
  std::string not_clean;
  double p99_bound_us = 0;           // the bound judged by
  double broker_cpu_us_per_delivery = -1;  // median over runs
};

struct ThroughputSummary {
  SearchResult search;
  std::vector<double> confirmed_rates;  // achieved publish rate of each confirmation run
  double broker_cpu_us_per_delivery = -1;  // median over the confirmation runs
  double drain_ms = -1;                 // the worst confirmation run's (each within the bound)
  // Latency of every message under that load (paced messages carry their
  // intended send time), the worst subscriber's p99; median over the runs.
  double latency_p99_us = -1;
};

struct RunReport {
  RunOptions options;
  std::vector<TrialRecord> trials;
  ThroughputSummary throughput;        // throughput mode
  std::vector<LatencyPoint> latency;   // latency (one point) and sweep modes
};

Result<RunReport> run_measurement(const RunOptions& options, const TrialRunner& runner);

// Why a latency run is not clean ("" when it is): its verdict, else its probe
// p99 over `p99_bound_us`, else its every-message p99 over the bound plus the
// wait a batched load message may have by design (TrialSpec::load_batch_us).
std::string unclean_reason(const TrialResult& run, double p99_bound_us, double load_batch_us);

// Median / min / max per statistic over runs.
void summarize_runs(LatencyPoint& point);
double median(std::vector<double> values);

}  // namespace tw::perf::run
