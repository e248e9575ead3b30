// tickwire perf sub: the measuring consumer of `tickwire perf` (docs/perf.md).
//   tickwire perf sub PATTERN | --prefix P --topics T [--groups G --group g]   [--seconds D] [--transport native|mqtt|nats|mqtt-raw|nats-raw] [--server HOST:PORT]
//       [--json] [--expect-publishers N] [--idle-exit-ms M] [--wait-ms W] [--clock monotonic|realtime]
//       [--connections K] [--probe-log FILE]
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "base/rotation.h"
#include "perf/consumer.h"
#include "perf/pacer.h"
#include "perf/cpu_time.h"
#include "perf/probe.h"
#include "perf/transport.h"
#include "perf/field_payload.h"
#include "perf_commands.h"

namespace tw::cli {

namespace {

constexpr uint64_t kSecondNs = 1'000'000'000;
constexpr int kSyncTimeoutMs = 5000;
constexpr int kMaxPollMs = 100;
constexpr size_t kProbeLogCapacity = size_t{1} << 18;  // per connection: 2 min of perf run's 2,000 probes/s

struct PerfSubOptions {
  std::string pattern;
  std::string prefix = "PERF";
  uint32_t topics = 0;  // without PATTERN: literal topics PREFIX/t, t < topics, t % groups == group
  uint32_t groups = 1;
  uint32_t group = 0;
  double seconds = 0;
  std::string transport = "native";
  std::string clock = "monotonic";
  bool json = false;
  uint64_t expect_publishers = 1;
  uint64_t idle_exit_ms = 2000;
  uint64_t wait_ms = 0;
  uint32_t connections = 1;  // subscribers hosted by this process, same topics each
  std::string probe_log;     // append every probe's send and arrival time here at the end
  uint32_t fields = 0;       // > 0: field-list payloads of this many value fields, each checked
};

int fail(const std::string& message) {
  std::fprintf(stderr, "tickwire perf sub: %s\n", message.c_str());
  return kExitError;
}

void print_line(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);  // read line by line through a pipe by `perf run`
}

// One subscriber: a connection and its own sequence and latency accounting.
struct Connection {
  std::unique_ptr<perf::Transport> transport;
  perf::Consumer consumer;
};

// Waits up to timeout_ms for input on any connection and handles it; -1 when
// a connection is lost. One connection waits in its own poll(); several wait
// together in one poll(2), as one client process hosting many connections,
// and only the ready ones are polled, except on a timeout, when every
// connection gets its turn (heartbeats, keepalives). Each call starts one
// connection further along (`rotation`): in a fixed order the last one would
// wait for the others' decoding every time, and the worst connection's
// percentile, which perf run reports, would measure this loop, not the broker.
int poll_connections(std::vector<std::unique_ptr<Connection>>& connections, std::vector<pollfd>& fds,
                     int timeout_ms, Rotation& rotation) {
  if (connections.size() == 1) return connections[0]->transport->poll(timeout_ms);
  fds.clear();
  int buffered = 0;  // connections with input already decrypted inside TLS: no fd shows it
  for (const auto& c : connections) {
    fds.push_back({c->transport->wait_fd(), POLLIN, 0});
    buffered += c->transport->has_buffered_input();
  }
  int ready = ::poll(fds.data(), fds.size(), buffered > 0 ? 0 : timeout_ms);
  if (ready < 0 && errno != EINTR) return -1;
  ready += buffered;
  int handled = 0;
  const size_t count = connections.size();
  const size_t first = rotation.start(count);
  for (size_t k = 0; k < count; ++k) {
    const size_t i = Rotation::at(first, k, count);
    if (ready > 0 && fds[i].revents == 0 && !connections[i]->transport->has_buffered_input()) continue;
    int n = connections[i]->transport->poll(0);
    if (n < 0) return -1;
    handled += n;
  }
  return handled;
}

// Runs the receive loop, printing one line per second and connection; returns
// the exit code.
class SubRun {
 public:
  SubRun(const PerfSubOptions& opts, perf::ClockKind clock, std::vector<std::unique_ptr<Connection>>& connections)
      : opts_(opts), clock_(clock), connections_(connections) {}

  int loop() {
    const uint64_t start = perf::clock_now_ns(clock_);
    uint64_t next_tick = 0;
    while (!g_stop_requested) {
      uint64_t now = perf::clock_now_ns(clock_);
      int timeout = kMaxPollMs;
      if (next_tick > now) timeout = static_cast<int>(std::min<uint64_t>((next_tick - now) / 1'000'000 + 1, kMaxPollMs));
      if (poll_connections(connections_, fds_, timeout, rotation_) < 0) return finish(fail("connection lost"));
      now = perf::clock_now_ns(clock_);
      if (!started()) {
        if (opts_.wait_ms != 0 && now - start >= opts_.wait_ms * 1'000'000) {
          std::fprintf(stderr, "tickwire perf sub: no message within %llu ms\n",
                       static_cast<unsigned long long>(opts_.wait_ms));
          return finish(kExitNotFound);
        }
        continue;
      }
      if (next_tick == 0) {
        next_tick = first_ns() + kSecondNs;
        if (!opts_.json) print_line(perf::interval_header_text());
      }
      for (; now >= next_tick; next_tick += kSecondNs) emit_intervals(next_tick);
      if (opts_.seconds > 0 && now - first_ns() >= static_cast<uint64_t>(opts_.seconds * 1e9)) break;
      if (idle_expired(now)) break;
    }
    if (started() && last_ns() + 1 > next_tick - kSecondNs) emit_intervals(last_ns() + 1);  // the partial last second
    return finish(kExitOk);
  }

 private:
  bool started() const {
    return std::any_of(connections_.begin(), connections_.end(), [](const auto& c) { return c->consumer.started(); });
  }
  uint64_t first_ns() const {
    uint64_t first = UINT64_MAX;
    for (const auto& c : connections_)
      if (c->consumer.started()) first = std::min(first, c->consumer.first_ns());
    return first;
  }
  uint64_t last_ns() const {
    uint64_t last = 0;
    for (const auto& c : connections_) last = std::max(last, c->consumer.last_ns());
    return last;
  }

  bool idle_expired(uint64_t now) const {
    if (opts_.idle_exit_ms == 0) return false;
    for (const auto& c : connections_)
      if (c->consumer.totals().publishers < opts_.expect_publishers) return false;
    return now - last_ns() >= opts_.idle_exit_ms * 1'000'000;
  }

  void emit_intervals(uint64_t end_ns) {
    for (size_t i = 0; i < connections_.size(); ++i) {
      perf::Consumer& consumer = connections_[i]->consumer;
      if (!consumer.started()) continue;
      perf::IntervalStats s = consumer.take_interval(end_ns);
      std::string line = opts_.json ? perf::interval_json(s) : perf::interval_text(s);
      print_line(connections_.size() == 1 ? line : labelled(i, line));
    }
  }

  int finish(int exit_code) {
    double cpu_s = perf::process_cpu_seconds();
    if (!opts_.probe_log.empty() && !write_probe_log()) exit_code = kExitError;
    for (size_t i = 0; i < connections_.size(); ++i) {
      perf::SubSummary summary = perf::make_summary(connections_[i]->consumer, cpu_s);
      if (opts_.json) print_line(perf::summary_json(summary));
      else std::printf("%s", (connections_.size() == 1 ? "" : "connection " + std::to_string(i) + ":\n")
                                 .append(perf::summary_text(summary)).c_str());
    }
    std::fflush(stdout);
    return exit_code;
  }

  // Appends, so that the trials of one `perf run` share a file: a comment
  // line, then "connection send_ns receive_ns" per probe.
  bool write_probe_log() const {
    FILE* out = std::fopen(opts_.probe_log.c_str(), "a");
    if (!out) {
      std::fprintf(stderr, "tickwire perf sub: cannot write %s: %s\n", opts_.probe_log.c_str(), std::strerror(errno));
      return false;
    }
    uint64_t not_logged = 0;
    for (const auto& c : connections_) not_logged += c->consumer.probes_not_logged();
    std::fprintf(out, "# connection send_ns receive_ns (clock %s; %llu later probes not logged)\n", opts_.clock.c_str(),
                 static_cast<unsigned long long>(not_logged));
    for (size_t i = 0; i < connections_.size(); ++i) {
      for (const perf::ProbeArrival& p : connections_[i]->consumer.probe_arrivals()) {
        std::fprintf(out, "%zu %llu %llu\n", i, static_cast<unsigned long long>(p.send_ns),
                     static_cast<unsigned long long>(p.receive_ns));
      }
    }
    return std::fclose(out) == 0;
  }

  // A JSON line gets "conn":i; a text line a "[i] " prefix.
  static std::string labelled(size_t i, const std::string& line) {
    if (!line.empty() && line[0] == '{') return "{\"conn\":" + std::to_string(i) + "," + line.substr(1);
    return "[" + std::to_string(i) + "] " + line;
  }

  const PerfSubOptions& opts_;
  perf::ClockKind clock_;
  std::vector<std::unique_ptr<Connection>>& connections_;
  std::vector<pollfd> fds_;
  Rotation rotation_;  // poll_connections' first connection
};

// PATTERN, or one literal topic per member of the group (how `perf run` builds fan-out).
std::vector<std::string> subscriptions(const PerfSubOptions& opts) {
  if (!opts.pattern.empty()) return {opts.pattern};
  std::vector<std::string> topics;
  for (uint32_t t = opts.group; t < opts.topics; t += opts.groups) topics.push_back(opts.prefix + "/" + std::to_string(t));
  return topics;
}

std::string describe(const PerfSubOptions& opts) {
  if (!opts.pattern.empty()) return opts.pattern;
  return opts.prefix + "/t for t < " + std::to_string(opts.topics) + ", t % " + std::to_string(opts.groups) +
         " == " + std::to_string(opts.group);
}

int run_perf_sub(const PerfSubOptions& opts, const CommonOptions& common) {
  perf::use_precise_timers();
  if (opts.pattern.empty() && opts.topics == 0) return fail("give a PATTERN or --topics T (with --prefix)");
  if (opts.group >= opts.groups) return fail("--group must be below --groups");
  if (subscriptions(opts).empty()) return fail("the group has no topics (--topics too small)");
  auto kind = perf::parse_transport(opts.transport);
  if (!kind) return fail(kind.error().message);
  auto clock = perf::parse_clock(opts.clock);
  if (!clock) return fail(clock.error().message);
  auto server = perf::resolve_server(*kind, common.server);
  if (!server) return fail(server.error().message);

  std::vector<std::unique_ptr<Connection>> connections;
  for (uint32_t i = 0; i < opts.connections; ++i) {
    auto c = std::make_unique<Connection>();
    auto made = perf::make_transport(*kind, "tickwire-perf-sub", perf_tls(common), payload_format(opts.fields));
    if (!made) return fail(made.error().message);
    c->transport = std::move(*made);
    c->consumer = perf::Consumer(opts.fields);
    perf::Consumer& consumer = c->consumer;
    if (!opts.probe_log.empty()) consumer.keep_probe_arrivals(kProbeLogCapacity);
    perf::ClockKind clock_kind = *clock;
    c->transport->set_handler([&consumer, clock_kind](const perf::Received& msg) {
      consumer.on_message(msg.payload, msg.is_initial_image, perf::clock_now_ns(clock_kind), msg.is_image);
    });
    if (Status s = c->transport->connect(server->host, server->port); !s) return fail(s.error().message);
    for (const std::string& pattern : subscriptions(opts))
      if (Status s = c->transport->subscribe(pattern); !s) return fail(s.error().message);
    // Publishers started after this line are certain to reach us.
    if (Status s = c->transport->sync(kSyncTimeoutMs); !s) return fail(s.error().message);
    consumer.joined(perf::clock_now_ns(clock_kind));
    if (opts.json) print_line(R"({"role":"sub","type":"ready"})");
    connections.push_back(std::move(c));
  }
  if (!opts.json) {
    std::fprintf(stderr, "subscribed to %s (%s %s:%u, %u connection(s)), waiting for publishers\n",
                 describe(opts).c_str(), opts.transport.c_str(), server->host.c_str(), server->port, opts.connections);
  }
  SubRun run(opts, *clock, connections);
  int rc = run.loop();
  for (auto& c : connections) c->transport->close();
  return rc;
}

}  // namespace

void add_perf_sub_command(CLI::App& perf, const CommonOptions& common, int& exit_code) {
  auto opts = std::make_shared<PerfSubOptions>();
  CLI::App* cmd = perf.add_subcommand("sub", "receive a perf load: rate, latency, gaps per second");
  cmd->add_option("pattern", opts->pattern, "native pattern, e.g. PERF/> (or use --topics)");
  cmd->add_option("--prefix", opts->prefix, "without PATTERN: topic prefix");
  cmd->add_option("--topics", opts->topics, "without PATTERN: subscribe to PREFIX/t for t < T (t % G == g)");
  cmd->add_option("--groups", opts->groups, "without PATTERN: number of subscriber groups G")->check(positive_number());
  cmd->add_option("--group", opts->group, "without PATTERN: this subscriber's group g < G");
  cmd->add_option("--seconds", opts->seconds, "stop this long after the first message, 0 = no limit")
      ->check(non_negative_number());
  cmd->add_option("--transport", opts->transport, "native, mqtt, nats, mqtt-raw or nats-raw")
      ->check(CLI::IsMember(perf::transport_names()));
  cmd->add_option("--clock", opts->clock, "clock the publishers stamp with: monotonic or realtime")
      ->check(CLI::IsMember({"monotonic", "realtime"}));
  cmd->add_flag("--json", opts->json, "per-second lines and the summary as JSON lines");
  cmd->add_option("--expect-publishers", opts->expect_publishers,
                  "the idle exit waits until this many publishers were heard");
  cmd->add_option("--idle-exit-ms", opts->idle_exit_ms, "stop after this long without a message, 0 = never");
  cmd->add_option("--connections", opts->connections,
                  "subscriber connections in this process, each with the same subscriptions and its own report")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--probe-log", opts->probe_log,
                  "at the end, append each probe's connection, send_ns and arrival time to this file");
  cmd->add_option("--fields", opts->fields,
                  "payloads are field lists of this many value fields (native only): every field is checked")
      ->check(CLI::Range(0u, perf::kMaxFields));
  cmd->add_option("--wait-ms", opts->wait_ms, "give up (exit 1) if no message came within this long, 0 = wait forever");
  cmd->callback([opts, &common, &exit_code]() { exit_code = run_perf_sub(*opts, common); });
}

}  // namespace tw::cli
