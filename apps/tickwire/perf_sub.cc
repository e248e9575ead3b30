// tickwire perf sub: the measuring consumer of `tickwire perf` (docs/perf.md).
//   tickwire perf sub PATTERN | --prefix P --topics T [--groups G --group g]   [--seconds D] [--transport native|mqtt|nats] [--server HOST:PORT]
//       [--json] [--expect-publishers N] [--idle-exit-ms M] [--wait-ms W] [--clock monotonic|realtime]
#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include "perf/consumer.h"
#include "perf/pacer.h"
#include "perf/cpu_time.h"
#include "perf/probe.h"
#include "perf/transport.h"
#include "perf_commands.h"

namespace tw::cli {

namespace {

constexpr uint64_t kSecondNs = 1'000'000'000;
constexpr int kSyncTimeoutMs = 5000;
constexpr int kMaxPollMs = 100;

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
};

int fail(const std::string& message) {
  std::fprintf(stderr, "tickwire perf sub: %s\n", message.c_str());
  return kExitError;
}

void print_line(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);  // read line by line through a pipe by `perf run`
}

// Runs the receive loop, printing one line per second; returns the exit code.
class SubRun {
 public:
  SubRun(const PerfSubOptions& opts, perf::ClockKind clock) : opts_(opts), clock_(clock) {}

  int loop(perf::Transport& transport) {
    const uint64_t start = perf::clock_now_ns(clock_);
    uint64_t next_tick = 0;
    while (!g_stop_requested) {
      uint64_t now = perf::clock_now_ns(clock_);
      int timeout = kMaxPollMs;
      if (next_tick > now) timeout = static_cast<int>(std::min<uint64_t>((next_tick - now) / 1'000'000 + 1, kMaxPollMs));
      if (transport.poll(timeout) < 0) return finish(fail("connection lost"));
      now = perf::clock_now_ns(clock_);
      if (!consumer_.started()) {
        if (opts_.wait_ms != 0 && now - start >= opts_.wait_ms * 1'000'000) {
          std::fprintf(stderr, "tickwire perf sub: no message within %llu ms\n",
                       static_cast<unsigned long long>(opts_.wait_ms));
          return finish(kExitNotFound);
        }
        continue;
      }
      if (next_tick == 0) {
        next_tick = consumer_.first_ns() + kSecondNs;
        if (!opts_.json) print_line(perf::interval_header_text());
      }
      for (; now >= next_tick; next_tick += kSecondNs) emit(consumer_.take_interval(next_tick));
      if (opts_.seconds > 0 && now - consumer_.first_ns() >= static_cast<uint64_t>(opts_.seconds * 1e9)) break;
      if (idle_expired(now)) break;
    }
    if (consumer_.started() && consumer_.last_ns() + 1 > next_tick - kSecondNs)
      emit(consumer_.take_interval(consumer_.last_ns() + 1));  // the partial last second
    return finish(kExitOk);
  }

  perf::Consumer& consumer() { return consumer_; }

 private:
  bool idle_expired(uint64_t now) const {
    if (opts_.idle_exit_ms == 0) return false;
    if (consumer_.totals().publishers < opts_.expect_publishers) return false;
    return now - consumer_.last_ns() >= opts_.idle_exit_ms * 1'000'000;
  }

  void emit(const perf::IntervalStats& s) { print_line(opts_.json ? perf::interval_json(s) : perf::interval_text(s)); }

  int finish(int exit_code) {
    perf::SubSummary summary = perf::make_summary(consumer_, perf::process_cpu_seconds());
    if (opts_.json) print_line(perf::summary_json(summary));
    else std::printf("%s", perf::summary_text(summary).c_str());
    std::fflush(stdout);
    return exit_code;
  }

  const PerfSubOptions& opts_;
  perf::ClockKind clock_;
  perf::Consumer consumer_;
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

  auto transport = perf::make_transport(*kind, "tickwire-perf-sub");
  SubRun run(opts, *clock);
  perf::ClockKind clock_kind = *clock;
  transport->set_handler([&run, clock_kind](const perf::Received& msg) {
    run.consumer().on_message(msg.payload, msg.is_initial_image, perf::clock_now_ns(clock_kind));
  });
  if (Status s = transport->connect(server->host, server->port); !s) return fail(s.error().message);
  for (const std::string& pattern : subscriptions(opts))
    if (Status s = transport->subscribe(pattern); !s) return fail(s.error().message);
  // Publishers started after this line are certain to reach us.
  if (Status s = transport->sync(kSyncTimeoutMs); !s) return fail(s.error().message);
  if (opts.json) {
    print_line(R"({"role":"sub","type":"ready"})");
  } else {
    std::fprintf(stderr, "subscribed to %s (%s %s:%u), waiting for publishers\n", describe(opts).c_str(),
                 opts.transport.c_str(), server->host.c_str(), server->port);
  }
  int rc = run.loop(*transport);
  transport->close();
  return rc;
}

}  // namespace

void add_perf_sub_command(CLI::App& perf, const CommonOptions& common, int& exit_code) {
  auto opts = std::make_shared<PerfSubOptions>();
  CLI::App* cmd = perf.add_subcommand("sub", "receive a perf load: rate, latency, gaps per second");
  cmd->add_option("pattern", opts->pattern, "native pattern, e.g. PERF/> (or use --topics)");
  cmd->add_option("--prefix", opts->prefix, "without PATTERN: topic prefix");
  cmd->add_option("--topics", opts->topics, "without PATTERN: subscribe to PREFIX/t for t < T (t % G == g)");
  cmd->add_option("--groups", opts->groups, "without PATTERN: number of subscriber groups G")->check(CLI::PositiveNumber);
  cmd->add_option("--group", opts->group, "without PATTERN: this subscriber's group g < G");
  cmd->add_option("--seconds", opts->seconds, "stop this long after the first message, 0 = no limit")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--transport", opts->transport, "native, mqtt or nats")
      ->check(CLI::IsMember({"native", "mqtt", "nats"}));
  cmd->add_option("--clock", opts->clock, "clock the publishers stamp with: monotonic or realtime")
      ->check(CLI::IsMember({"monotonic", "realtime"}));
  cmd->add_flag("--json", opts->json, "per-second lines and the summary as JSON lines");
  cmd->add_option("--expect-publishers", opts->expect_publishers,
                  "the idle exit waits until this many publishers were heard");
  cmd->add_option("--idle-exit-ms", opts->idle_exit_ms, "stop after this long without a message, 0 = never");
  cmd->add_option("--wait-ms", opts->wait_ms, "give up (exit 1) if no message came within this long, 0 = wait forever");
  cmd->callback([opts, &common, &exit_code]() { exit_code = run_perf_sub(*opts, common); });
}

}  // namespace tw::cli
