// tickwire sub PATTERN [--count N] [--json] [--slow-policy conflate|drop|disconnect] [--conflate MS] [--delay S]:
// exits 1 when the broker closes the subscription (STATUS CLOSED).
// One line per image, update or status on stdout; gaps and connection events on stderr.
#include <cstdio>

#include "tickwire/client/message_format.h"
#include "common.h"

namespace tw::cli {

namespace {

struct SubOptions {
  std::string pattern;
  uint64_t count = 0;  // 0 = until interrupted
  bool json = false;
  std::string slow_policy;  // "" = the broker's default
  uint32_t conflate_ms = 0;  // 0 = every update (real time)
  double delay_s = 0;        // 0 = live data
};

// Seconds (fractions allowed) as whole milliseconds, rounded to the nearest.
uint32_t delay_ms_of(double seconds) { return static_cast<uint32_t>(seconds * 1'000.0 + 0.5); }

wire::SlowPolicy slow_policy_of(const std::string& name) {
  if (name == "conflate") return wire::SlowPolicy::Conflate;
  if (name == "drop") return wire::SlowPolicy::Drop;
  if (name == "disconnect") return wire::SlowPolicy::Disconnect;
  return wire::SlowPolicy::Default;
}

void print_gap(const client::Message& msg) {
  const std::string topic = client::terminal_safe(msg.topic);
  std::fprintf(stderr, "tickwire sub: gap on %s: expected seq %llu, got %llu%s\n", topic.c_str(),
               static_cast<unsigned long long>(msg.expected_seq), static_cast<unsigned long long>(msg.seq),
               msg.gap_announced ? " (announced: the broker dropped them for this slow subscriber)" : "");
}

int run_sub(const SubOptions& opts, const CommonOptions& common) {
  if (const std::string note = dotted_levels_note(opts.pattern); !note.empty()) {
    std::fprintf(stderr, "tickwire sub: %s\n", note.c_str());
  }
  auto dict = dictionary(common);
  if (!dict) {
    std::fprintf(stderr, "tickwire sub: %s\n", dict.error().message.c_str());
    return kExitError;
  }
  auto options = client_options(common, "tickwire-sub");
  if (!options) {
    std::fprintf(stderr, "tickwire sub: %s\n", options.error().message.c_str());
    return kExitError;
  }
  client::Client client;
  uint64_t received = 0;
  int exit_code = kExitOk;
  bool done = false;
  auto subscribed = client.subscribe(opts.pattern, [&](const client::Message& msg) {
    if (done) return;
    if (msg.gap) print_gap(msg);
    std::string line = opts.json ? client::format_json(msg, **dict) : client::format_text(msg, **dict);
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
    if (opts.json) std::fflush(stdout);  // JSON lines feed other programs: no buffering delay
    done = opts.count != 0 && ++received >= opts.count;
  }, slow_policy_of(opts.slow_policy), opts.conflate_ms, delay_ms_of(opts.delay_s));
  if (!subscribed) {
    std::fprintf(stderr, "tickwire sub: %s\n", subscribed.error().message.c_str());
    return kExitError;
  }
  client.on_connection([](client::ConnectionEvent event, std::string_view reason) {
    std::fprintf(stderr, "tickwire sub: %s%s%s\n", client::event_name(event), reason.empty() ? "" : ": ",
                 client::terminal_safe(reason).c_str());
  });
  client.on_error([&](const client::ErrorInfo& e) {
    std::fprintf(stderr, "tickwire sub: broker error %s: %s\n", wire::code_name(e.code),
                 client::terminal_safe(e.text).c_str());
    if (e.request_id != 0) {  // our subscription was refused: nothing will ever arrive
      exit_code = kExitError;
      done = true;
    }
  });
  // A subscriber may start before its broker: the first connect is retried like a reconnect.
  if (!connect_retrying(client, *options, "tickwire sub")) return kExitError;
  while (!done && !g_stop_requested) {
    if (client.poll(100) < 0) {
      std::fprintf(stderr, "tickwire sub: connection lost\n");
      return kExitError;
    }
    std::fflush(stdout);
    if (client.subscription_count() == 0) {  // the broker ended it (STATUS CLOSED): nothing more will come
      exit_code = kExitNotFound;
      break;
    }
  }
  client.close();
  return exit_code;
}

}  // namespace

void add_sub_command(CLI::App& app, const CommonOptions& common, int& exit_code) {
  auto opts = std::make_shared<SubOptions>();
  CLI::App* cmd = app.add_subcommand("sub", "subscribe to a topic pattern and print what arrives");
  cmd->add_option("pattern", opts->pattern, "topic or pattern, e.g. DEMO/EQ/> or DEMO/*/AAPL")->required()->check(native_path());
  cmd->add_option("-n,--count", opts->count, "exit after N messages (0 = run until interrupted)");
  cmd->add_flag("--json", opts->json, "print JSON lines");
  cmd->add_option("--slow-policy", opts->slow_policy,
                  "if this subscriber falls behind: conflate (latest state), drop (announced gaps) or "
                  "disconnect; default: the broker's")
      ->check(CLI::IsMember({"conflate", "drop", "disconnect"}));
  cmd->add_option("--conflate", opts->conflate_ms,
                  "at most one merged update per channel every MS milliseconds (rounded up to the broker's "
                  "50 ms tick); 0 = every update")
      ->check(CLI::Range(0u, 3'600'000u));
  cmd->add_option("--delay", opts->delay_s,
                  "delayed data: every channel as it was S seconds ago (fractions allowed, e.g. 0.5 or 900); "
                  "0 = live")
      ->check(CLI::Range(0.0, 86'400.0));
  cmd->callback([opts, &common, &exit_code]() { exit_code = run_sub(*opts, common); });
}

}  // namespace tw::cli
