#include "perf/run/trial.h"

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "base/clock.h"
#include "perf/run/child_process.h"
#include "perf/run/cpu_timeline.h"
#include "perf/run/fanout.h"
#include "perf/run/proc_stats.h"

namespace tw::perf::run {

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

constexpr int kReadyTimeoutMs = 15'000;
constexpr int kSubIdleExitMs = 1'000;
constexpr double kSubExtraSeconds = 15;  // subs outlive the publishers by at most this
// How long the loop that reads the children waits; it samples the broker's CPU
// time on every turn, and /proc counts it in 10 ms ticks.
constexpr int kPumpMs = 10;

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", value);
  return text;
}

std::string log_path(const TrialSpec& spec, const std::string& name) {
  return spec.log_dir.empty() ? std::string() : spec.log_dir + "/" + name + ".log";
}

std::vector<std::string> common_args(const TrialSpec& spec, const char* role, const std::string& server) {
  std::vector<std::string> args = {spec.tickwire};
  args.insert(args.end(), spec.global_args.begin(), spec.global_args.end());
  args.insert(args.end(), {"perf", role, "--json", "--transport", spec.transport, "--server", server});
  if (spec.fields > 0) args.insert(args.end(), {"--fields", std::to_string(spec.fields)});
  return args;
}

ChildSpec subscriber_spec(const TrialSpec& spec, const FanoutPlan& plan, int index) {
  const std::string& server =
      spec.sub_servers.empty() ? spec.server : spec.sub_servers[static_cast<size_t>(index) % spec.sub_servers.size()];
  ChildSpec child{common_args(spec, "sub", server), log_path(spec, "sub" + std::to_string(index)), true};
  // Process `index` hosts members of group index % G, as subscriber `index` would.
  for (std::string& arg : subscriber_topic_args(plan, index, spec.prefix)) child.argv.push_back(std::move(arg));
  if (spec.connections_per_sub > 1) {
    child.argv.push_back("--connections");
    child.argv.push_back(std::to_string(spec.connections_per_sub));
  }
  if (spec.probe_log && !spec.log_dir.empty()) {
    child.argv.push_back("--probe-log");
    child.argv.push_back(spec.log_dir + "/probes-sub" + std::to_string(index) + ".tsv");
  }
  for (const std::string& arg : {std::string("--seconds"), number(spec.seconds + kSubExtraSeconds),
                                 std::string("--idle-exit-ms"), std::to_string(kSubIdleExitMs)})
    child.argv.push_back(arg);
  return child;
}

ChildSpec publisher_spec(const TrialSpec& spec, const TopicRange& range, int index) {
  ChildSpec child{common_args(spec, "pub", spec.server), log_path(spec, "pub" + std::to_string(index)), true};
  double rate = spec.rate / spec.publishers;
  double probe_rate = spec.probe_rate / spec.publishers;
  std::vector<std::string> args = {"--id", std::to_string(index), "--prefix", spec.prefix,
                                   "--topics", std::to_string(range.count), "--topic-offset",
                                   std::to_string(range.offset), "--rate", number(std::max(rate, 1.0)),
                                   "--size", std::to_string(spec.size), "--seconds", number(spec.seconds)};
  if (spec.seconds != static_cast<long long>(spec.seconds)) args.back() = std::to_string(spec.seconds);
  if (probe_rate > 0) {
    args.push_back("--probe-rate");
    args.push_back(number(std::max(probe_rate, 1.0)));
  }
  if (spec.load_batch_us > 0) {
    args.push_back("--load-batch-us");
    args.push_back(number(spec.load_batch_us));
  }
  child.argv.insert(child.argv.end(), args.begin(), args.end());
  return child;
}

void merge_latency(LatencySummary& into, const json& from, bool first) {
  auto get = [&](const char* key) { return from.value(key, 0.0); };
  if (first) {
    into = {get("min"), get("mean"), get("p50"), get("p90"),       get("p99"),
            get("p999"), get("max"), get("stddev"), get("under_50us"), get("over_1ms")};
    return;
  }
  into.stddev = std::max(into.stddev, get("stddev"));
  into.under_50us = std::min(into.under_50us, get("under_50us"));
  into.over_1ms += get("over_1ms");
  into.min = std::min(into.min, get("min"));
  into.mean = std::max(into.mean, get("mean"));
  into.p50 = std::max(into.p50, get("p50"));
  into.p90 = std::max(into.p90, get("p90"));
  into.p99 = std::max(into.p99, get("p99"));
  into.p999 = std::max(into.p999, get("p999"));
  into.max = std::max(into.max, get("max"));
}

// Reads lines and reaps; drops children that are done from `live`.
void pump_and_absorb(std::vector<Child*>& live, TrialResult& result, int timeout_ms, const char* role,
                     int* ready_count) {
  pump_children(live, timeout_ms);
  for (Child* child : live) {
    for (const std::string& line : child->take_lines()) {
      if (ready_count != nullptr && line.find("\"ready\"") != std::string::npos) ++*ready_count;
      if (!absorb_json_line(line, result)) std::fprintf(stderr, "perf run: %s said: %s\n", role, line.c_str());
    }
  }
  std::erase_if(live, [&](Child* child) {
    if (child->stdout_fd() >= 0 || !child->try_reap()) return false;
    if (!WIFEXITED(child->exit_status()) || WEXITSTATUS(child->exit_status()) != 0)
      result.problems.push_back(std::string(role) + " pid " + std::to_string(child->pid()) + " exited with status " +
                                std::to_string(child->exit_status()));
    return true;
  });
}

// The broker's peak RSS and each of its threads' share of a core since `start`.
void record_broker_threads(pid_t pid, const std::map<std::string, double>& start, Clock::time_point since,
                           TrialResult& result) {
  if (pid <= 0) return;
  if (auto kib = peak_rss_kib(pid)) result.broker_peak_rss_kib = *kib;
  double window = std::chrono::duration<double>(Clock::now() - since).count();
  if (window <= 0) return;
  for (const auto& [name, seconds] : thread_cpu_seconds(pid)) {
    auto before = start.find(name);
    result.broker_thread_cores[name] = (seconds - (before != start.end() ? before->second : 0)) / window;
  }
}

void sample_broker_cpu(pid_t pid, CpuTimeline& timeline) {
  if (pid <= 0) return;
  if (auto seconds = process_cpu_seconds(pid)) timeline.add(monotonic_ns(), *seconds);
}

// Splits the broker's CPU at the publishers' stop and at the end of the drain
// bound (the whole window when the stop is unknown).
void account_broker_cpu(const CpuTimeline& cpu, TrialResult& result, double bound_ms) {
  uint64_t start = cpu.first_ns(), end = cpu.last_ns();
  uint64_t stop = result.publishers_stop_ns;
  if (stop == 0 || stop < start || stop > end) {
    result.broker_cpu_s = cpu.between(start, end);
    result.broker_cpu_window_s = static_cast<double>(end - start) / 1e9;
    return;
  }
  uint64_t cut = std::min(end, stop + static_cast<uint64_t>(bound_ms * 1e6));
  result.broker_cpu_s = cpu.between(start, cut);
  result.broker_cpu_window_s = static_cast<double>(cut - start) / 1e9;
  result.broker_cpu_after_stop_s = cpu.between(stop, end);
  result.broker_cpu_past_bound_s = cpu.between(cut, end);
}

// Every child of ours reports these; without them the verdict cannot hold.
void require_drain_times(TrialResult& result) {
  if (result.sent > 0 && result.received > 0 && (result.publishers_stop_ns == 0 || result.last_arrival_ns == 0))
    result.problems.push_back("no stop_ns from the publishers or no last_ns from the subscribers: drain unknown");
}

}  // namespace

double default_drain_bound_ms(double trial_seconds) {
  return std::max(kMinDrainBoundMs, kDrainBoundTrialShare * trial_seconds * 1000);
}

double drain_bound_ms(const TrialSpec& spec) {
  return spec.drain_bound_ms > 0 ? spec.drain_bound_ms : default_drain_bound_ms(spec.seconds);
}

double TrialResult::broker_cpu_per_delivery_us() const {
  if (broker_cpu_s < 0 || received == 0) return -1;
  return broker_cpu_s * 1e6 / static_cast<double>(received);
}

double TrialResult::drain_ms() const {
  if (publishers_stop_ns == 0 || last_arrival_ns == 0) return -1;
  if (last_arrival_ns <= publishers_stop_ns) return 0;
  return static_cast<double>(last_arrival_ns - publishers_stop_ns) / 1e6;
}

bool TrialResult::broker_busy_past_bound() const {
  return broker_cpu_past_bound_s > drain_bound_ms / 1000;
}

bool absorb_json_line(const std::string& line, TrialResult& result) {
  json value = json::parse(line, nullptr, false);
  if (value.is_discarded() || !value.is_object()) return false;
  std::string role = value.value("role", "");
  std::string type = value.value("type", "");
  if (role == "pub") {
    result.sent += value.value("sent", 0ULL);
    result.probes_sent += value.value("probes_sent", 0ULL);
    // Achieved is compared with offered, the load rate: probes are sent besides it.
    result.achieved_rate += value.value("load_rate", value.value("rate", 0.0));
    result.saturated = result.saturated || value.value("saturated", false);
    result.publishers_stop_ns = std::max(result.publishers_stop_ns, value.value("stop_ns", 0ULL));
    if (value.contains("probe_wake_late_us")) {
      const json& late = value["probe_wake_late_us"];
      result.probes_woken_late += late.value("count", 0ULL);
      result.wake_late_p50_us = std::max(result.wake_late_p50_us, late.value("p50", 0.0));
      result.wake_late_p99_us = std::max(result.wake_late_p99_us, late.value("p99", 0.0));
    }
    return true;
  }
  if (role == "sub" && type == "summary") {
    bool first = result.received == 0 && result.probes_received == 0;
    // Subscribers start before publishers, so an IMAGE here is the first message of a
    // channel created after the subscription: a delivery, which `received` leaves out.
    unsigned long long images = value.value("images", 0ULL);
    result.received += value.value("received", 0ULL) + images;
    result.images += images;
    result.probes_received += value.value("probes", 0ULL);
    result.gaps += value.value("gaps", 0ULL);
    result.missing += value.value("missing", 0ULL);
    result.dups += value.value("dups", 0ULL);
    result.missing_fids += value.value("missing_fids", 0ULL);
    result.wrong_values += value.value("wrong_values", 0ULL);
    result.last_arrival_ns = std::max(result.last_arrival_ns, value.value("last_ns", 0ULL));
    if (value.contains("latency_us")) merge_latency(result.latency, value["latency_us"], first);
    if (value.contains("probe_latency_us")) merge_latency(result.probe_latency, value["probe_latency_us"], first);
    return true;
  }
  return role == "sub";  // per-second and ready lines carry nothing the result keeps
}

void judge_trial(TrialResult& result, int fanout, double bound_ms) {
  // perf pub's `sent` counts every message, probes included, as `received` does.
  result.expected = result.sent * static_cast<unsigned long long>(fanout);
  result.drain_bound_ms = bound_ms;
  bool lossy = !result.problems.empty() || result.gaps > 0 || result.missing > 0 ||
               result.missing_fids > 0 || result.wrong_values > 0 ||
               result.received < result.expected || result.sent == 0;
  bool late = result.drain_ms() > bound_ms || result.broker_busy_past_bound();
  if (result.saturated) result.verdict = Verdict::Saturated;
  else if (lossy) result.verdict = Verdict::Lossy;
  else if (late) result.verdict = Verdict::Backlogged;
  else result.verdict = Verdict::Ok;
}

Result<TrialResult> run_trial(const TrialSpec& spec) {
  auto plan = plan_fanout(spec.subscribers, spec.fanout, spec.topics);
  if (!plan) return plan.error();
  auto ranges = split_topics(spec.topics, spec.publishers);
  if (!ranges) return ranges.error();
  auto sub_processes = subscriber_processes(*plan, spec.connections_per_sub);
  if (!sub_processes) return sub_processes.error();

  TrialResult result;
  result.offered_rate = spec.rate;
  std::vector<Child> subs;
  for (int s = 0; s < *sub_processes; ++s) {
    auto child = Child::spawn(subscriber_spec(spec, *plan, s));
    if (!child) return child.error();
    subs.push_back(std::move(*child));
  }
  std::vector<Child*> live_subs;
  for (Child& child : subs) live_subs.push_back(&child);
  int ready = 0;
  auto ready_deadline = Clock::now() + std::chrono::milliseconds(kReadyTimeoutMs);
  while (ready < spec.subscribers && !live_subs.empty() && Clock::now() < ready_deadline)
    pump_and_absorb(live_subs, result, 50, "sub", &ready);
  if (ready < spec.subscribers)
    return Error{std::to_string(spec.subscribers - ready) + " subscriber(s) never printed {\"type\":\"ready\"}"};

  auto threads_start = spec.broker_pid > 0 ? thread_cpu_seconds(spec.broker_pid) : std::map<std::string, double>{};
  auto machine_start = machine_ticks();
  // The CPU window's first sample right after the window's start (the reads above take milliseconds under
  // ASan), so the span it covers never exceeds the window: both read CLOCK_MONOTONIC.
  auto window_start = Clock::now();
  CpuTimeline broker_cpu;
  sample_broker_cpu(spec.broker_pid, broker_cpu);
  std::vector<Child> pubs;
  for (int p = 0; p < spec.publishers; ++p) {
    auto child = Child::spawn(publisher_spec(spec, (*ranges)[static_cast<size_t>(p)], p));
    if (!child) return child.error();
    pubs.push_back(std::move(*child));
  }
  std::vector<Child*> live_pubs;
  for (Child& child : pubs) live_pubs.push_back(&child);
  auto deadline = window_start + std::chrono::duration<double>(spec.seconds + kSubExtraSeconds + 5);
  while ((!live_pubs.empty() || !live_subs.empty()) && Clock::now() < deadline) {
    if (!live_pubs.empty()) pump_and_absorb(live_pubs, result, kPumpMs, "pub", nullptr);
    if (!live_subs.empty()) pump_and_absorb(live_subs, result, live_pubs.empty() ? kPumpMs : 0, "sub", nullptr);
    sample_broker_cpu(spec.broker_pid, broker_cpu);
  }
  sample_broker_cpu(spec.broker_pid, broker_cpu);
  record_broker_threads(spec.broker_pid, threads_start, window_start, result);
  result.steal_pct = steal_percent(machine_start, machine_ticks());
  result.window_s = std::chrono::duration<double>(Clock::now() - window_start).count();
  if (!live_pubs.empty() || !live_subs.empty())
    result.problems.push_back(std::to_string(live_pubs.size() + live_subs.size()) + " child(ren) killed at the deadline");
  for (Child& child : pubs) {
    child.terminate(500);
    result.pub_cpu_s += child.cpu_seconds();
  }
  for (Child& child : subs) {
    child.terminate(500);
    result.sub_cpu_s += child.cpu_seconds();
  }
  account_broker_cpu(broker_cpu, result, drain_bound_ms(spec));
  require_drain_times(result);
  judge_trial(result, spec.fanout, drain_bound_ms(spec));
  return result;
}

nlohmann::json to_json(const LatencySummary& l) {
  return {{"min", l.min}, {"mean", l.mean}, {"p50", l.p50}, {"p90", l.p90},
          {"p99", l.p99}, {"p999", l.p999}, {"max", l.max}, {"stddev", l.stddev},
          {"under_50us", l.under_50us}, {"over_1ms", l.over_1ms}};
}

nlohmann::json to_json(const TrialResult& r) {
  return {{"offered_rate", r.offered_rate},
          {"achieved_rate", r.achieved_rate},
          {"sent", r.sent},
          {"probes_sent", r.probes_sent},
          {"expected", r.expected},
          {"received", r.received},
          {"probes_received", r.probes_received},
          {"images", r.images},
          {"lost", r.lost()},
          {"gaps", r.gaps},
          {"missing", r.missing},
          {"dups", r.dups},
          {"broker_peak_rss_kib", r.broker_peak_rss_kib},
          {"broker_thread_cores", r.broker_thread_cores},
          {"missing_fids", r.missing_fids},
          {"wrong_values", r.wrong_values},
          {"saturated", r.saturated},
          {"window_s", r.window_s},
          {"drain_ms", r.drain_ms()},
          {"drain_bound_ms", r.drain_bound_ms},
          {"broker_cpu_s", r.broker_cpu_s},
          {"broker_cpu_window_s", r.broker_cpu_window_s},
          {"broker_cpu_after_stop_s", r.broker_cpu_after_stop_s},
          {"broker_cpu_past_bound_s", r.broker_cpu_past_bound_s},
          {"broker_cpu_us_per_delivery", r.broker_cpu_per_delivery_us()},
          {"pub_cpu_s", r.pub_cpu_s},
          {"sub_cpu_s", r.sub_cpu_s},
          {"steal_pct", r.steal_pct},
          {"latency_us", to_json(r.latency)},
          {"probe_latency_us", to_json(r.probe_latency)},
          {"probe_wake_late", {{"count", r.probes_woken_late}, {"p50_us", r.wake_late_p50_us},
                               {"p99_us", r.wake_late_p99_us}}},
          {"problems", r.problems},
          {"verdict", verdict_name(r.verdict)}};
}

}  // namespace tw::perf::run
