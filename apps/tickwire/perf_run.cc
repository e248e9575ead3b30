// tickwire perf run --mode throughput|latency|sweep ...: the orchestrator
// (docs/perf.md, "Orchestrator"). Starts the broker unless --server is given,
// runs `perf sub` / `perf pub` children of this same binary, and writes
// result.json, table.txt and latency.svg into --out.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>

#include "perf/run/broker.h"
#include "perf/run/orchestrator.h"
#include "perf/run/report.h"
#include "perf/field_payload.h"
#include "perf_commands.h"

namespace tw::cli {

namespace {

namespace run = tw::perf::run;

// A throughput trial must outlast the broker's buffers: with tens of MiB of
// output buffer per connection, a 1 s trial at a rate the broker cannot
// sustain still delivers everything, late (docs/perf.md, "Drain bound").
constexpr double kThroughputTrialSeconds = 5;
constexpr double kLatencyTrialSeconds = 2;

struct PerfRunOptions {
  std::string mode = "throughput";
  std::string transport = "native";
  std::string server;
  std::string sub_servers;  // comma-separated; empty: --server
  std::string broker_cmd;
  std::vector<std::string> global_args;  // tickwire's TLS flags, passed on to perf pub and perf sub
  int publishers = 1;
  int subscribers = 1;
  int topics = 1;
  int fanout = 1;
  int size = 100;
  int fields = 0;
  double seconds = 0;  // 0: kThroughputTrialSeconds or kLatencyTrialSeconds
  double drain_bound_ms = 0;  // 0: run::default_drain_bound_ms(seconds)
  double rate = 0;  // 0: 50,000 start (throughput), 10,000 (latency)
  double probe_rate = 2000;
  double load_batch_us = 0;
  int connections_per_sub = 1;
  bool probe_log = false;
  std::string rates = "10000,50000,100000";
  int runs = 3;
  int bisect_steps = 4;
  double max_rate = 50'000'000;
  double p99_bound_us = run::kDefaultP99BoundUs;
  std::string out = "perf-run";
  std::string label;
};

std::string self_path() {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string() : path.string();
}

Result<std::vector<double>> parse_rates(const std::string& text) {
  std::vector<double> rates;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    char* end = nullptr;
    double rate = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || rate <= 0) return Error{"--rates: bad rate '" + item + "'"};
    rates.push_back(rate);
  }
  return rates;
}

Result<run::RunOptions> build_options(const PerfRunOptions& o) {
  auto mode = run::parse_mode(o.mode);
  if (!mode) return mode.error();
  auto rates = parse_rates(o.rates);
  if (!rates) return rates.error();
  run::RunOptions options;
  options.mode = *mode;
  options.rates = *rates;
  options.runs = o.runs;
  options.bisect_steps = o.bisect_steps;
  options.max_rate = o.max_rate;
  options.label = o.label;
  options.p99_bound_us = o.p99_bound_us;
  run::TrialSpec& t = options.trial;
  t.tickwire = self_path();
  t.global_args = o.global_args;
  t.transport = o.transport;
  t.publishers = o.publishers;
  t.subscribers = o.subscribers;
  t.topics = o.topics;
  t.fanout = o.fanout;
  t.size = o.size;
  t.fields = o.fields;
  double default_seconds = *mode == run::Mode::Throughput ? kThroughputTrialSeconds : kLatencyTrialSeconds;
  t.seconds = o.seconds > 0 ? o.seconds : default_seconds;
  t.drain_bound_ms = o.drain_bound_ms;
  t.rate = o.rate > 0 ? o.rate : (*mode == run::Mode::Throughput ? 50'000 : 10'000);
  t.probe_rate = *mode == run::Mode::Throughput ? 0 : o.probe_rate;
  t.load_batch_us = o.load_batch_us;
  t.connections_per_sub = o.connections_per_sub;
  for (size_t at = 0; at < o.sub_servers.size();) {
    size_t comma = std::min(o.sub_servers.find(',', at), o.sub_servers.size());
    if (comma > at) t.sub_servers.push_back(o.sub_servers.substr(at, comma - at));
    at = comma + 1;
  }
  t.log_dir = o.out + "/logs";
  t.probe_log = o.probe_log;
  return options;
}

// The broker: given (--server), started from --broker-cmd, or our own tickwired.
Result<std::unique_ptr<run::StartedBroker>> start_broker(const PerfRunOptions& o, const std::string& dir) {
  if (!o.server.empty()) return std::unique_ptr<run::StartedBroker>();
  auto started = o.broker_cmd.empty()
                     ? run::start_tickwired((std::filesystem::path(self_path()).parent_path() / "tickwired").string(), dir)
                     : run::start_broker_command(o.broker_cmd, dir);
  if (!started) return started.error();
  return std::make_unique<run::StartedBroker>(std::move(*started));
}

int run_perf_run(const PerfRunOptions& o, const std::string& command_line) {
  auto options = build_options(o);
  if (!options) {
    std::fprintf(stderr, "tickwire perf run: %s\n", options.error().message.c_str());
    return kExitError;
  }
  std::error_code error;
  std::filesystem::create_directories(options->trial.log_dir, error);
  auto broker = start_broker(o, o.out);
  if (!broker) {
    std::fprintf(stderr, "tickwire perf run: %s\n", broker.error().message.c_str());
    return kExitError;
  }
  options->trial.server = *broker ? (*broker)->address : o.server;
  options->trial.broker_pid = *broker ? (*broker)->process.pid() : -1;
  auto report = run::run_measurement(*options, run::run_trial);
  if (*broker) (*broker)->process.terminate(3000);
  if (!report) {
    std::fprintf(stderr, "tickwire perf run: %s\n", report.error().message.c_str());
    return kExitError;
  }
  const char* argv[] = {command_line.c_str()};
  run::RunContext context = run::current_context(1, argv);
  context.command = command_line;
  if (auto written = run::write_report_files(o.out, *report, context); !written) {
    std::fprintf(stderr, "tickwire perf run: %s\n", written.error().message.c_str());
    return kExitError;
  }
  std::fputs(run::report_table(*report).c_str(), stdout);
  std::printf("\nwritten: %s/result.json, %s/table.txt, %s/latency.svg\n", o.out.c_str(), o.out.c_str(),
              o.out.c_str());
  return kExitOk;
}

std::string read_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string command;
  for (size_t start = 0; start < raw.size();) {
    size_t end = raw.find('\0', start);
    if (end == std::string::npos) end = raw.size();
    std::string arg = raw.substr(start, end - start);
    if (!command.empty()) command += ' ';
    bool plain = !arg.empty() && arg.find_first_of(" \t\"'$*?{}") == std::string::npos;
    command += plain ? arg : "'" + arg + "'";
    start = end + 1;
  }
  return command;
}

}  // namespace

void add_perf_run_command(CLI::App& perf, const CommonOptions& common, int& exit_code) {
  auto o = std::make_shared<PerfRunOptions>();
  CLI::App* cmd = perf.add_subcommand("run", "start a broker and load processes, measure, report");
  cmd->add_option("--mode", o->mode, "throughput, latency or sweep")
      ->check(CLI::IsMember({"throughput", "latency", "sweep"}));
  cmd->add_option("--transport", o->transport, "native, mqtt, nats, mqtt-raw or nats-raw")->check(CLI::IsMember(perf::transport_names()));
  auto* server = cmd->add_option("--server", o->server, "use a running broker at HOST:PORT");
  cmd->add_option("--broker-cmd", o->broker_cmd, "start this broker command; {port} is replaced by a free port")
      ->excludes(server);
  cmd->add_option("--sub-server", o->sub_servers,
                  "subscriber processes connect here instead, HOST:PORT[,HOST:PORT...] round-robin (a cascade's "
                  "edges; publishers stay on --server)")
      ->needs(server);
  cmd->add_option("--publishers", o->publishers, "publisher processes")->check(positive_number());
  cmd->add_option("--subscribers", o->subscribers, "subscribers (connections)")->check(positive_number());
  cmd->add_option("--connections-per-sub", o->connections_per_sub,
                  "subscribers hosted by one perf sub process, 1 = a process each (divides --fanout)")
      ->check(positive_number());
  cmd->add_option("--topics", o->topics, "topics, split among the publishers")->check(positive_number());
  cmd->add_option("--fanout", o->fanout, "subscribers receiving each message (divides --subscribers)")
      ->check(positive_number());
  cmd->add_option("--size", o->size, "payload bytes (>= 32)")->check(CLI::Range(32, 1 << 24));
  cmd->add_option("--fields", o->fields,
                  "field-list payloads of this many value fields (native; replaces --size), every field checked "
                  "by the subscribers: MISSING FIDS")
      ->check(CLI::Range(0, static_cast<int>(perf::kMaxFields)));
  cmd->add_option("--seconds", o->seconds, "seconds per trial (default 5 for throughput, 2 for latency and sweep)")
      ->check(positive_number());
  cmd->add_option("--drain-bound-ms", o->drain_bound_ms,
                  "every subscriber must have everything this long after the publishers stop "
                  "(default: the larger of 50 ms and 2 % of --seconds)")
      ->check(positive_number());
  cmd->add_option("--rate", o->rate, "total msgs/s: start rate (throughput) or background rate (latency)")
      ->check(non_negative_number());
  cmd->add_option("--probe-rate", o->probe_rate, "probe msgs/s (latency, sweep)")->check(non_negative_number());
  cmd->add_option("--load-batch-us", o->load_batch_us,
                  "publishers let the background load wait up to this long and send it in bursts; probes stay on time")
      ->check(non_negative_number());
  cmd->add_flag("--probe-log", o->probe_log,
               "each perf sub appends every probe's send and arrival time to OUT/logs/probes-sub<k>.tsv");
  cmd->add_option("--p99-bound-us", o->p99_bound_us,
                  "latency, sweep: a point is clean only if every run's probe p99 is within this bound (and the p99 "
                  "of all messages within it plus --load-batch-us), besides nothing lost (default 1000)")
      ->check(positive_number());
  cmd->add_option("--rates", o->rates, "background rates for sweep, comma separated");
  cmd->add_option("--runs", o->runs, "repetitions (latency, sweep) or confirmation runs (throughput)")
      ->check(positive_number());
  cmd->add_option("--bisect-steps", o->bisect_steps, "throughput: bisection steps between good and bad")
      ->check(non_negative_number());
  cmd->add_option("--max-rate", o->max_rate, "throughput: highest total rate tried")->check(positive_number());
  cmd->add_option("--out", o->out, "output folder for result.json, table.txt, latency.svg, logs/");
  cmd->add_option("--label", o->label, "name of this broker/configuration in reports");
  // The global --server is ignored on purpose: perf run starts its own broker
  // unless its own --server is given. The TLS flags go to perf pub and perf sub.
  cmd->callback([o, &common, &exit_code]() {
    o->global_args = tls_args(common);
    exit_code = run_perf_run(*o, read_command_line());
  });
}

}  // namespace tw::cli
