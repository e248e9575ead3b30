// tickwire consume QUEUE [--count N] [--window W] [--timeout-ms T] [--nack]
// Binds to a durable queue, prints each message and acknowledges it (docs/guaranteed.md).
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
};

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
  uint64_t received = 0;
  auto last = std::chrono::steady_clock::now();
  auto bound = client.bind(opts.queue, [&](const client::QueueMessage& m) {
    print_message(m);
    Status answered = opts.nack ? client.nack(m.bind_id, m.seq) : client.ack(m.bind_id, m.seq);
    if (!answered) std::fprintf(stderr, "tickwire consume: %s\n", answered.error().message.c_str());
    ++received;
    last = std::chrono::steady_clock::now();
  }, opts.window);
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
  cmd->footer("Each line: QUEUE seq=N [redelivered] TOPIC PAYLOAD (non-printable bytes as \\xNN).\n"
              "  tickwire consume orders -n 10");
  cmd->callback([opts, &common, &exit_code]() { exit_code = run_consume(*opts, common); });
}

}  // namespace tw::cli
