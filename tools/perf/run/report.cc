#include "perf/run/report.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "perf/run/svg.h"

namespace tw::perf::run {

namespace {

using json = nlohmann::json;

json options_json(const RunOptions& o) {
  const TrialSpec& t = o.trial;
  return {{"mode", mode_name(o.mode)}, {"label", o.label},         {"transport", t.transport},
          {"server", t.server},        {"publishers", t.publishers}, {"subscribers", t.subscribers},
          {"topics", t.topics},        {"fanout", t.fanout},       {"size", t.size}, {"fields", t.fields},
          {"seconds", t.seconds},      {"rate", t.rate},           {"probe_rate", t.probe_rate},
          {"rates", o.rates},          {"runs", o.runs},           {"load_batch_us", t.load_batch_us},
          {"connections_per_sub", t.connections_per_sub}, {"drain_bound_ms", drain_bound_ms(t)},
          {"p99_bound_us", o.p99_bound_us}};
}

json latency_point_json(const LatencyPoint& p) {
  json runs = json::array();
  for (const LatencySummary& run : p.runs) runs.push_back(to_json(run));
  return {{"rate", p.rate},           {"clean", p.clean},         {"not_clean", p.not_clean},
          {"p99_bound_us", p.p99_bound_us}, {"probe_latency_us", to_json(p.median)},
          {"spread_min_us", to_json(p.low)}, {"spread_max_us", to_json(p.high)}, {"runs", runs},
          {"broker_cpu_us_per_delivery", p.broker_cpu_us_per_delivery}};
}

json throughput_json(const RunReport& r) {
  const ThroughputSummary& t = r.throughput;
  json steps = json::array();
  for (const SearchStep& s : t.search.steps)
    steps.push_back({{"phase", phase_name(s.phase)}, {"rate", s.rate}, {"verdict", verdict_name(s.verdict)}});
  double low = t.confirmed_rates.empty() ? 0 : *std::min_element(t.confirmed_rates.begin(), t.confirmed_rates.end());
  double high = t.confirmed_rates.empty() ? 0 : *std::max_element(t.confirmed_rates.begin(), t.confirmed_rates.end());
  return {{"found", t.search.found},
          {"rate", t.search.rate},
          {"deliveries_per_s", t.search.rate * r.options.trial.fanout},
          {"limited_by", !t.search.found ? "nothing passed" : t.search.saturated ? "load generator" : "broker"},
          {"saturated", t.search.saturated},
          {"confirmed_rates", t.confirmed_rates},
          {"spread_min", low},
          {"spread_max", high},
          {"broker_cpu_us_per_delivery", t.broker_cpu_us_per_delivery},
          {"drain_ms", t.drain_ms},
          {"drain_bound_ms", drain_bound_ms(r.options.trial)},
          {"latency_p99_us", t.latency_p99_us},
          {"steps", steps}};
}

std::string header(const RunReport& r) {
  const TrialSpec& t = r.options.trial;
  char text[512];
  std::snprintf(text, sizeof text,
                "tickwire perf run: %s, transport %s%s%s\n"
                "publishers %d, subscribers %d (%d per process), topics %d, fan-out %d, payload %d B, %.3g s per "
                "trial, drain bound %.0f ms, runs %d\n\n",
                mode_name(r.options.mode), t.transport.c_str(), r.options.label.empty() ? "" : ", label ",
                r.options.label.c_str(), t.publishers, t.subscribers, t.connections_per_sub, t.topics, t.fanout, t.size,
                t.seconds, drain_bound_ms(t), r.options.runs);
  return text;
}

// Drain and broker CPU past the bound are what a Backlogged verdict rests on.
// Two latencies, labelled apart as they measure different things: "all" is
// every message's (load and probes; a load message carries its intended send
// time, so a publisher behind its schedule or a batched load counts), "probe"
// the probes' alone (sent on time, what a latency point reports; "-" without probes).
std::string trials_table(const RunReport& r) {
  std::string out =
      "phase      offered/s  achieved/s    delivered         lost   gaps  mfids  sat  drain ms  p99 all us  "
      "p99 probe us  broker CPU s  past bound s  CPU us/deliv  verdict\n";
  for (const TrialRecord& record : r.trials) {
    const TrialResult& t = record.result;
    char probe_p99[32] = "-";
    if (t.probes_received > 0) std::snprintf(probe_p99, sizeof probe_p99, "%.1f", t.probe_latency.p99);
    char line[320];
    std::snprintf(line, sizeof line,
                  "%-9s %10.0f %11.0f %12llu %12llu %6llu %6llu  %-3s %8.1f %11.1f %13s %13.3f %13.3f %13.3f  %s\n",
                  record.phase.c_str(), t.offered_rate, t.achieved_rate, t.received, t.lost(), t.gaps, t.missing_fids,
                  t.saturated ? "yes" : "no", t.drain_ms(), t.latency.p99, probe_p99, t.broker_cpu_s,
                  t.broker_cpu_past_bound_s, t.broker_cpu_per_delivery_us(), verdict_name(t.verdict));
    out += line;
  }
  return out;
}

std::string throughput_summary(const RunReport& r) {
  const ThroughputSummary& t = r.throughput;
  if (!t.search.found) return "\nNo rate passed " + std::to_string(r.options.runs) + " consecutive clean runs.\n";
  double low = *std::min_element(t.confirmed_rates.begin(), t.confirmed_rates.end());
  double high = *std::max_element(t.confirmed_rates.begin(), t.confirmed_rates.end());
  char text[768];
  std::snprintf(text, sizeof text,
                "\nMax sustainable rate: %.0f msg/s published (%.0f deliveries/s), %zu confirmation runs achieved "
                "%.0f..%.0f msg/s\nDrain after the publishers stopped: %.1f ms at worst (bound %.0f ms)\n"
                "Latency under that load: p99 %.1f us (every message, worst subscriber, median of runs)\n"
                "Broker CPU: %.3f us per delivered message%s\n",
                t.search.rate, t.search.rate * r.options.trial.fanout, t.confirmed_rates.size(), low, high, t.drain_ms,
                drain_bound_ms(r.options.trial), t.latency_p99_us, t.broker_cpu_us_per_delivery,
                t.search.saturated ? "\nNOTE: the load generator saturated; the broker's limit is higher than found."
                                   : "");
  return text;
}

// The broker's peak RSS over the run and, from the last trial, each of its
// threads' share of a core (the tiered broker's gateways and access points).
std::string broker_usage(const RunReport& r) {
  if (r.trials.empty()) return "";
  unsigned long long peak = 0;
  for (const TrialRecord& record : r.trials) peak = std::max(peak, record.result.broker_peak_rss_kib);
  if (peak == 0) return "";
  std::string out = "\nBroker: peak RSS " + std::to_string(peak / 1024) + " MiB; CPU per thread in the last trial (cores):";
  for (const auto& [name, cores] : r.trials.back().result.broker_thread_cores) {
    char cell[96];
    std::snprintf(cell, sizeof cell, " %s %.2f", name.c_str(), cores);
    out += cell;
  }
  return out + "\n";
}

std::string latency_summary(const RunReport& r) {
  std::string out = "\nProbe latency (us), median of runs [min..max over runs]:\n"
                    "    rate/s      min     mean      p50               p99             p99.9       max   stddev  "
                    "<50us   >1ms  clean  CPU us/deliv\n";
  std::string reasons;
  for (const LatencyPoint& p : r.latency) {
    char line[320];
    std::snprintf(line, sizeof line,
                  "%10.0f %8.1f %8.1f %8.1f %8.1f [%.0f..%.0f] %8.1f [%.0f..%.0f] %9.1f %8.1f %5.1f%% %6.0f  %-5s %12.3f\n",
                  p.rate, p.median.min, p.median.mean, p.median.p50, p.median.p99, p.low.p99, p.high.p99,
                  p.median.p999, p.low.p999, p.high.p999, p.median.max, p.median.stddev, 100 * p.median.under_50us,
                  p.median.over_1ms, p.clean ? "yes" : "NO", p.broker_cpu_us_per_delivery);
    out += line;
    if (!p.clean) {
      std::snprintf(line, sizeof line, "  not clean at %.0f msg/s: %s\n", p.rate, p.not_clean.c_str());
      reasons += line;
    }
  }
  char rule[256];
  std::snprintf(rule, sizeof rule,
                "Clean: in every run nothing lost, no publisher saturated, no backlog, probe p99 <= %.0f us and p99 "
                "of all messages <= %.0f us (the bound plus --load-batch-us).\n",
                r.options.p99_bound_us, r.options.p99_bound_us + r.options.trial.load_batch_us);
  return out + reasons + rule;
}

}  // namespace

RunContext current_context(int argc, const char* const* argv) {
  RunContext context;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) context.command += ' ';
    std::string arg = argv[i];
    bool plain = !arg.empty() && arg.find_first_of(" \t\"'$*?{}") == std::string::npos;
    context.command += plain ? arg : "'" + arg + "'";
  }
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  context.date = date;
  context.machine = machine_info();
  return context;
}

json report_json(const RunReport& r, const RunContext& c) {
  json trials = json::array();
  for (const TrialRecord& record : r.trials) {
    json trial = to_json(record.result);
    trial["phase"] = record.phase;
    trials.push_back(trial);
  }
  json summary;
  if (r.options.mode == Mode::Throughput) summary = throughput_json(r);
  else {
    summary["points"] = json::array();
    for (const LatencyPoint& p : r.latency) summary["points"].push_back(latency_point_json(p));
  }
  return {{"tool", "tickwire perf run"},
          {"schema", 1},
          {"command", c.command},
          {"date", c.date},
          {"machine",
           {{"cpus", c.machine.cpus}, {"cpu_model", c.machine.cpu_model}, {"kernel", c.machine.kernel},
            {"hostname", c.machine.hostname}}},
          {"options", options_json(r.options)},
          {"trials", trials},
          {"summary", summary}};
}

std::string report_table(const RunReport& r) {
  std::string out = header(r) + trials_table(r);
  out += r.options.mode == Mode::Throughput ? throughput_summary(r) : latency_summary(r);
  out += broker_usage(r);
  return out;
}

std::string report_svg(const RunReport& r) {
  std::string who = r.options.label.empty() ? r.options.trial.transport : r.options.label;
  if (r.options.mode == Mode::Throughput) {
    BarChart chart{"Sustained rate per confirmation run (" + who + ")", "msg/s published", {}, {}};
    for (size_t i = 0; i < r.throughput.confirmed_rates.size(); ++i) {
      chart.labels.push_back("run " + std::to_string(i + 1));
      chart.values.push_back(r.throughput.confirmed_rates[i]);
    }
    return render_svg(chart);
  }
  LineChart chart{"Probe latency vs background rate (" + who + ")", "background rate, msg/s (log)", "latency, us",
                  true, {{"p50", {}}, {"p99", {}}, {"p99.9", {}}}};
  for (const LatencyPoint& p : r.latency) {
    chart.series[0].points.push_back({p.rate, p.median.p50});
    chart.series[1].points.push_back({p.rate, p.median.p99});
    chart.series[2].points.push_back({p.rate, p.median.p999});
  }
  return render_svg(chart);
}

Status write_report_files(const std::string& dir, const RunReport& report, const RunContext& context) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return Error{"cannot create " + dir + ": " + error.message()};
  auto write = [&](const std::string& name, const std::string& text) -> Status {
    std::ofstream out(dir + "/" + name);
    out << text;
    out.close();
    if (!out) return Error{"cannot write " + dir + "/" + name};
    return Ok{};
  };
  if (auto s = write("result.json", report_json(report, context).dump(2) + "\n"); !s) return s;
  if (auto s = write("table.txt", report_table(report)); !s) return s;
  return write("latency.svg", report_svg(report));
}

}  // namespace tw::perf::run
