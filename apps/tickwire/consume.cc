// tickwire consume QUEUE [--count N] [--window W] [--timeout-ms T] [--nack]
//                  [--topic PATTERN [--unsubscribe]] [--from-seq N | --from-time TIME]
// Binds to a durable queue (or a durable topic subscription), prints each
// message and acknowledges it (docs/guaranteed.md).
#include <charconv>
#include <chrono>
#include <cstdio>
#include <string>

#include "common.h"

namespace tw::cli {

namespace {

struct ConsumeOptions {
  std::string queue;
  uint64_t count = 0;  // 0 = until interrupted
  uint32_t window = 0;
  uint32_t timeout_ms = 0;  // stop after this long without a message; 0 = never
  bool nack = false;        // give every message back instead of acknowledging it (inspection)
  std::string topic;        // a durable topic subscription named `queue`
  bool unsubscribe = false; // delete the durable subscription at the end
  uint64_t from_seq = 0;    // replay from this seq (0: no replay)
  std::string from_time;    // replay from this time
};

// TIME: ns since the epoch, or -N followed by s, m or h (that long before now).
Result<uint64_t> parse_time(const std::string& text) {
  uint64_t n = 0;
  const bool ago = text.starts_with('-');
  const char* begin = text.data() + (ago ? 1 : 0);
  const char* end = text.data() + text.size();
  auto [at, ec] = std::from_chars(begin, end, n);
  if (ec != std::errc{} || at == begin) return Error{"--from-time '" + text + "': expected ns since the epoch or -N[s|m|h]"};
  if (!ago && at == end) return n;
  const std::string unit(at, end);
  const uint64_t scale = unit == "s" ? 1'000'000'000ull : unit == "m" ? 60'000'000'000ull : unit == "h" ? 3'600'000'000'000ull : 0;
  if (!ago || scale == 0) return Error{"--from-time '" + text + "': expected ns since the epoch or -N[s|m|h]"};
  const auto now = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  return n * scale > now ? 0 : now - n * scale;
}

// One line: seq, the redelivered flag, topic, payload (non-printable bytes as \xNN).
void print_message(const client::QueueMessage& m) {
  std::string text;
  for (uint8_t c : m.payload) {
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      text.push_back(static_cast<char>(c));
    } else {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02X", c);
      text += escaped;
    }
  }
  std::printf("%.*s seq=%llu%s %.*s %s\n", static_cast<int>(m.queue.size()), m.queue.data(),
              static_cast<unsigned long long>(m.seq), m.redelivered ? " redelivered" : "",
              static_cast<int>(m.topic.size()), m.topic.data(), text.c_str());
}

int run_consume(const ConsumeOptions& opts, const CommonOptions& common) {
  auto options = client_options(common, "tickwire-consume");
  if (!options) {
    std::fprintf(stderr, "tickwire consume: %s\n", options.error().message.c_str());
    return kExitError;
  }
  client::Client client;
  bool refused = false;
  client.on_error([&](const client::ErrorInfo& e) {
    refused = true;
    std::fprintf(stderr, "tickwire consume: %s: %.*s\n", wire::code_name(e.code), static_cast<int>(e.text.size()),
                 e.text.data());
  });
  client::BindOptions bind{.window = opts.window, .topic = opts.topic};
  if (opts.from_seq != 0) {
    bind.replay = wire::ReplayFrom::Seq;
    bind.from = opts.from_seq;
  } else if (!opts.from_time.empty()) {
    auto from = parse_time(opts.from_time);
    if (!from) {
      std::fprintf(stderr, "tickwire consume: %s\n", from.error().message.c_str());
      return kExitError;
    }
    bind.replay = wire::ReplayFrom::Time;
    bind.from = *from;
  }
  uint64_t received = 0;
  auto last = std::chrono::steady_clock::now();
  auto bound = client.bind(opts.queue, [&](const client::QueueMessage& m) {
    print_message(m);
    Status answered = opts.nack ? client.nack(m.bind_id, m.seq) : client.ack(m.bind_id, m.seq);
    if (!answered) std::fprintf(stderr, "tickwire consume: %s\n", answered.error().message.c_str());
    ++received;
    last = std::chrono::steady_clock::now();
  }, bind);
  if (!bound) {
    std::fprintf(stderr, "tickwire consume: %s\n", bound.error().message.c_str());
    return kExitError;
  }
  if (!connect_or_report(client, *options)) return kExitError;
  while (!g_stop_requested && !refused && (opts.count == 0 || received < opts.count)) {
    client.poll(50);
    std::fflush(stdout);
    if (opts.timeout_ms != 0 && std::chrono::steady_clock::now() - last > std::chrono::milliseconds(opts.timeout_ms)) break;
  }
  if (opts.unsubscribe && !refused) {
    if (Status done = client.unsubscribe(*bound); !done) {
      std::fprintf(stderr, "tickwire consume: unsubscribe: %s\n", done.error().message.c_str());
      refused = true;
    } else {
      client.poll(200);  // its answer: a refusal comes through on_error
    }
  }
  client.close();  // drains the last acknowledgements
  if (refused) return kExitError;
  return opts.count == 0 || received >= opts.count ? kExitOk : kExitNotFound;
}

}  // namespace

void add_consume_command(CLI::App& app, const CommonOptions& common, int& exit_code) {
  auto opts = std::make_shared<ConsumeOptions>();
  CLI::App* cmd = app.add_subcommand("consume", "bind to a durable queue, print its messages and acknowledge them");
  cmd->add_option("queue", opts->queue, "queue name, as a [[queue]] of the broker's configuration names it")->required();
  cmd->add_option("-n,--count", opts->count, "stop after this many messages (exit 1 if fewer came before --timeout-ms)");
  cmd->add_option("-w,--window", opts->window, "messages delivered and unacknowledged at once (default: the broker's maximum)");
  cmd->add_option("--timeout-ms", opts->timeout_ms, "stop after this long without a message (0 = never)");
  cmd->add_flag("--nack", opts->nack, "give each message back (NACK) instead of acknowledging it: it stays in the queue");
  cmd->add_option("--topic", opts->topic,
                  "QUEUE names a durable topic subscription of this topic pattern, made if absent "
                  "(bound with another topic, it starts afresh)");
  cmd->add_flag("--unsubscribe", opts->unsubscribe, "at the end, delete the durable subscription (and what it holds)");
  auto* seq = cmd->add_option("--from-seq", opts->from_seq, "first replay every message held from this sequence number");
  cmd->add_option("--from-time", opts->from_time,
                  "first replay every message held stored from this time: ns since the epoch, or -N[s|m|h] ago")
      ->excludes(seq);
  cmd->footer("Each line: QUEUE seq=N [redelivered] TOPIC PAYLOAD (non-printable bytes as \\xNN).\n"
              "  tickwire consume orders -n 10\n"
              "  tickwire consume my-fills --topic 'FILL/>'      (a durable subscription)\n"
              "  tickwire consume orders --from-time -10m      (replay the last 10 minutes held)");
  cmd->callback([opts, &common, &exit_code]() { exit_code = run_consume(*opts, common); });
}

}  // namespace tw::cli
