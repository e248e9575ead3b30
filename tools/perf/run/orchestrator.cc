#include "perf/run/orchestrator.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace tw::perf::run {

namespace {

// Fields of LatencySummary in a fixed order, for per-statistic folds.
constexpr double LatencySummary::* kStats[] = {&LatencySummary::min, &LatencySummary::mean, &LatencySummary::p50,
                                               &LatencySummary::p90, &LatencySummary::p99, &LatencySummary::p999,
                                               &LatencySummary::max, &LatencySummary::stddev,
                                               &LatencySummary::under_50us, &LatencySummary::over_1ms};

Result<TrialResult> run_logged(const RunOptions& options, const TrialRunner& runner, TrialSpec spec,
                               const char* phase, RunReport& report) {
  // A fresh prefix per trial: the broker's last-value cache still holds the previous
  // trial's topics, whose images would otherwise reach this trial's wildcard subscribers.
  spec.prefix += "T" + std::to_string(report.trials.size());
  std::fprintf(stderr, "perf run: %s trial at %.0f msg/s ...\n", phase, spec.rate);
  auto result = runner(spec);
  if (!result) return result;
  std::fprintf(stderr, "perf run:   sent %llu, received %llu of %llu, gaps %llu, drain %.1f ms (bound %.0f), %s%s\n",
               result->sent, result->received, result->expected, result->gaps, result->drain_ms(),
               result->drain_bound_ms, verdict_name(result->verdict),
               result->problems.empty() ? "" : (" (" + result->problems.front() + ")").c_str());
  report.trials.push_back({phase, *result});
  (void)options;
  return result;
}

Status measure_throughput(const RunOptions& options, const TrialRunner& runner, RunReport& report) {
  SearchConfig config;
  config.start_rate = options.trial.rate > 0 ? options.trial.rate : 50'000;
  config.confirm_runs = options.runs;
  config.bisect_steps = options.bisect_steps;
  config.max_rate = options.max_rate;
  Error failure;
  bool failed = false;
  std::vector<double> confirm_cpu, confirm_drain, confirm_p99;
  TrialFunction trial = [&](double rate, SearchPhase phase) {
    if (failed) return Verdict::Lossy;
    TrialSpec spec = options.trial;
    spec.rate = rate;
    auto result = run_logged(options, runner, spec, phase_name(phase), report);
    if (!result) {
      failed = true;
      failure = result.error();
      return Verdict::Lossy;
    }
    if (phase == SearchPhase::Confirm) {
      // A failed confirmation run restarts the confirmation at a lower rate.
      if (result->verdict != Verdict::Ok) {
        report.throughput.confirmed_rates.clear();
        confirm_cpu.clear(), confirm_drain.clear(), confirm_p99.clear();
      } else {
        report.throughput.confirmed_rates.push_back(result->achieved_rate);
        confirm_cpu.push_back(result->broker_cpu_per_delivery_us());
        confirm_drain.push_back(result->drain_ms());
        confirm_p99.push_back(result->latency.p99);
      }
    }
    return result->verdict;
  };
  report.throughput.search = search_max_rate(config, trial);
  if (failed) return failure;
  if (!report.throughput.search.found) report.throughput.confirmed_rates.clear();
  if (!confirm_cpu.empty()) {
    report.throughput.broker_cpu_us_per_delivery = median(confirm_cpu);
    report.throughput.drain_ms = *std::max_element(confirm_drain.begin(), confirm_drain.end());
    report.throughput.latency_p99_us = median(confirm_p99);
  }
  return Ok{};
}

Result<LatencyPoint> measure_latency_at(const RunOptions& options, const TrialRunner& runner, double rate,
                                        RunReport& report) {
  LatencyPoint point;
  point.rate = rate;
  point.p99_bound_us = options.p99_bound_us;
  std::vector<double> cpu;
  for (int run = 0; run < options.runs; ++run) {
    TrialSpec spec = options.trial;
    spec.rate = rate;
    auto result = run_logged(options, runner, spec, "latency", report);
    if (!result) return result.error();
    point.runs.push_back(result->probe_latency);
    if (point.clean) point.not_clean = unclean_reason(*result, options.p99_bound_us, spec.load_batch_us);
    point.clean = point.not_clean.empty();
    cpu.push_back(result->broker_cpu_per_delivery_us());
  }
  summarize_runs(point);
  point.broker_cpu_us_per_delivery = median(cpu);
  return point;
}

}  // namespace

Result<Mode> parse_mode(const std::string& name) {
  if (name == "throughput") return Mode::Throughput;
  if (name == "latency") return Mode::Latency;
  if (name == "sweep") return Mode::Sweep;
  return Error{"unknown mode '" + name + "' (throughput, latency or sweep)"};
}

const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::Throughput: return "throughput";
    case Mode::Latency: return "latency";
    case Mode::Sweep: return "sweep";
  }
  return "?";
}

std::string unclean_reason(const TrialResult& run, double p99_bound_us, double load_batch_us) {
  char text[160];
  if (run.verdict != Verdict::Ok) return verdict_name(run.verdict);
  if (run.probe_latency.p99 > p99_bound_us) {
    std::snprintf(text, sizeof text, "probe p99 %.0f us over the %.0f us bound", run.probe_latency.p99, p99_bound_us);
    return text;
  }
  if (run.latency.p99 > p99_bound_us + load_batch_us) {
    std::snprintf(text, sizeof text, "p99 of all messages %.0f us over the %.0f us bound", run.latency.p99,
                  p99_bound_us + load_batch_us);
    return text;
  }
  return "";
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

void summarize_runs(LatencyPoint& point) {
  for (auto stat : kStats) {
    std::vector<double> values;
    for (const LatencySummary& run : point.runs) values.push_back(run.*stat);
    point.median.*stat = median(values);
    point.low.*stat = values.empty() ? 0 : *std::min_element(values.begin(), values.end());
    point.high.*stat = values.empty() ? 0 : *std::max_element(values.begin(), values.end());
  }
}

Result<RunReport> run_measurement(const RunOptions& options, const TrialRunner& runner) {
  if (options.runs < 1) return Error{"--runs must be at least 1"};
  RunReport report;
  report.options = options;
  if (options.mode == Mode::Throughput) {
    if (auto status = measure_throughput(options, runner, report); !status) return status.error();
    return report;
  }
  std::vector<double> rates = options.mode == Mode::Sweep ? options.rates : std::vector<double>{options.trial.rate};
  if (rates.empty()) return Error{"sweep needs --rates"};
  for (double rate : rates) {
    auto point = measure_latency_at(options, runner, rate, report);
    if (!point) return point.error();
    report.latency.push_back(std::move(*point));
  }
  return report;
}

}  // namespace tw::perf::run
