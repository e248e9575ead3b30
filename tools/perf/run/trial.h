// One measured trial: S `perf sub` and P `perf pub` child processes against a
// running broker, their JSON lines collected, the broker's CPU time taken
// around the measured window (docs/perf.md, "Orchestrator").
#pragma once
#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tickwire/base/result.h"
#include "perf/run/rate_search.h"

namespace tw::perf::run {

// The drain bound (docs/perf.md, "Drain bound"): how long after the
// publishers stop every subscriber must have received everything, and the
// broker must be done. A broker with megabytes of output buffer per
// connection can take in far more than it sends out; without a bound a short
// trial measures that buffering, not a rate the broker sustains.
inline constexpr double kMinDrainBoundMs = 50;      // below this, scheduling noise of a small VM
inline constexpr double kDrainBoundTrialShare = 0.02;  // of the trial's duration
double default_drain_bound_ms(double trial_seconds);  // max(50 ms, 2 % of the trial)

struct TrialSpec {
  std::string tickwire;         // path of the tickwire binary (perf pub/sub)
  std::vector<std::string> global_args;  // tickwire's global flags for them (--tls --ca FILE ...)
  std::string transport = "native";
  std::string server;           // HOST:PORT of the broker
  // Where the subscriber processes connect instead, round-robin (a cascade:
  // publishers on the core, subscribers on its edges); empty: `server`.
  std::vector<std::string> sub_servers;
  pid_t broker_pid = -1;        // for its CPU time; -1 = unknown (external --server)
  std::string prefix = "PERF";
  int publishers = 1;
  int subscribers = 1;
  int topics = 1;
  int fanout = 1;
  int size = 100;
  int fields = 0;               // > 0: field-list payloads of this many value fields (perf pub/sub --fields)
  double seconds = 2;
  double rate = 0;              // total over all publishers, msgs/s
  double probe_rate = 0;        // total, msgs/s; 0 = none
  double load_batch_us = 0;     // perf pub --load-batch-us; 0 = every load message on time
  int connections_per_sub = 1;  // subscribers per perf sub process (perf sub --connections)
  std::string log_dir;          // children's stderr go to LOG_DIR/<role><k>.log; empty = inherited
  bool probe_log = false;       // perf sub k appends its probes' times to LOG_DIR/probes-sub<k>.tsv
  double drain_bound_ms = 0;    // 0 = default_drain_bound_ms(seconds)
};
double drain_bound_ms(const TrialSpec& spec);

struct LatencySummary {
  double min = 0, mean = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;  // µs
  double stddev = 0;      // µs, the worst subscriber's
  double under_50us = 0;  // share of samples under 50 µs, the worst subscriber's (0..1)
  double over_1ms = 0;    // samples over 1 ms, all subscribers together
};

struct TrialResult {
  double offered_rate = 0;      // TrialSpec::rate
  unsigned long long sent = 0;  // over publishers, probes included (perf pub's "sent")
  unsigned long long probes_sent = 0;
  unsigned long long expected = 0;  // deliveries expected: sent x fanout
  unsigned long long received = 0;  // over subscribers (deliveries, probes and images included)
  unsigned long long images = 0;    // of received: delivered as a native IMAGE (a new channel's first message)
  unsigned long long probes_received = 0;
  unsigned long long gaps = 0, missing = 0, dups = 0;
  unsigned long long missing_fids = 0, wrong_values = 0;  // --fields: checked in every message
  bool saturated = false;       // a publisher fell behind its schedule
  double achieved_rate = 0;     // sent / publish seconds (sum over publishers)
  double window_s = 0;          // first publisher start .. last subscriber exit
  // The drain, on CLOCK_MONOTONIC (every child runs on this machine): from the
  // last publisher's stop (perf pub's stop_ns) to the last arrival at any
  // subscriber (perf sub's last_ns); 0 = not reported.
  unsigned long long publishers_stop_ns = 0;
  unsigned long long last_arrival_ns = 0;
  double drain_bound_ms = 0;    // the bound this trial was judged by
  // Broker CPU from the first publisher start to the publishers' stop plus
  // the drain bound (to the last subscriber exit when the stop is unknown).
  double broker_cpu_s = -1;     // -1 = unknown
  double broker_cpu_window_s = 0;  // the span broker_cpu_s covers (window_s runs on to the last subscriber exit)
  double broker_cpu_after_stop_s = -1;   // from the publishers' stop to the last subscriber exit
  double broker_cpu_past_bound_s = -1;   // from the stop plus the bound to the last subscriber exit
  double pub_cpu_s = 0, sub_cpu_s = 0;
  unsigned long long broker_peak_rss_kib = 0;  // VmHWM at the trial's end (since the broker started); 0 unknown
  std::map<std::string, double> broker_thread_cores;  // per broker thread name: its CPU over the window, in cores
  double steal_pct = -1;        // the hypervisor's steal over the window, % of the machine's CPU time; -1 unknown
  LatencySummary latency;       // all messages; the worst subscriber's percentiles
  LatencySummary probe_latency; // probes only; the worst subscriber's percentiles
  // Probes a publisher's timer woke it late for (stamped at the wake, perf pub's
  // probe_wake_late_us): how many, and the worst publisher's p50/p99 lateness.
  unsigned long long probes_woken_late = 0;
  double wake_late_p50_us = 0, wake_late_p99_us = 0;
  std::vector<std::string> problems;  // a child failed, no summary, ...
  Verdict verdict = Verdict::Lossy;

  unsigned long long lost() const { return expected > received ? expected - received : 0; }
  double broker_cpu_per_delivery_us() const;  // -1 when unknown
  // Last arrival - publishers' stop, at least 0 (the last message may arrive
  // before the publisher's loop notices the end); -1 when either is unknown.
  double drain_ms() const;
  // Still working after the bound: more broker CPU past it than the bound
  // itself (an idle broker spends next to none; one draining a backlog, about
  // a core), so a broker that buffers where subscribers cannot see it fails too.
  bool broker_busy_past_bound() const;
};

// Runs the trial to completion; an Error means it could not start at all.
Result<TrialResult> run_trial(const TrialSpec& spec);

// Pure parts, tested on their own.
// Folds one JSON line of a child into the result; false if not JSON.
bool absorb_json_line(const std::string& line, TrialResult& result);
// Sets expected, drain_bound_ms and the verdict: Saturated (a publisher fell
// behind), else Lossy (a problem, gaps, missing or fewer received than
// expected), else Backlogged (drain over the bound, or the broker busy past
// it), else Ok.
void judge_trial(TrialResult& result, int fanout, double bound_ms);

nlohmann::json to_json(const TrialResult& result);
nlohmann::json to_json(const LatencySummary& latency);

}  // namespace tw::perf::run
