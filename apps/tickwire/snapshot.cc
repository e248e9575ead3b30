// tickwire snapshot TOPIC [--json] [--timeout MS]
// Prints the cached image of one topic, or "not found" (exit 1).
#include <cstdio>

#include "tickwire/client/message_format.h"
#include "topic/topic.h"
#include "common.h"

namespace tw::cli {

namespace {

struct SnapshotOptions {
  std::string topic;
  bool json = false;
  int timeout_ms = 5000;
};

int run_snapshot(const SnapshotOptions& opts, const CommonOptions& common) {
  if (const std::string note = dotted_levels_note(opts.topic); !note.empty()) {
    std::fprintf(stderr, "tickwire snapshot: %s\n", note.c_str());
  }
  auto dict = dictionary(common);
  if (!dict) {
    std::fprintf(stderr, "tickwire snapshot: %s\n", dict.error().message.c_str());
    return kExitError;
  }
  // A snapshot is of one topic: say so of a pattern before connecting (the
  // client's own check speaks of publishing).
  if (topic::validate_topic(opts.topic, topic::Limits{}) == topic::Error::WildcardInTopic) {
    std::fprintf(stderr,
                 "tickwire snapshot: '%s' is a pattern ('*' or '>' level); a snapshot is of one topic "
                 "(use 'tickwire sub %s' to see every matching topic)\n",
                 client::terminal_safe(opts.topic).c_str(), client::terminal_safe(opts.topic).c_str());
    return kExitError;
  }
  auto options = client_options(common, "tickwire-snapshot");
  if (!options) {
    std::fprintf(stderr, "tickwire snapshot: %s\n", options.error().message.c_str());
    return kExitError;
  }
  options->reconnect = false;
  client::Client client;
  if (!connect_or_report(client, *options)) return kExitError;
  auto result = client.snapshot(opts.topic, opts.timeout_ms);
  if (!result) {
    std::fprintf(stderr, "tickwire snapshot: %s\n", result.error().message.c_str());
    return kExitError;
  }
  if (!result->found) {
    std::printf("not found\n");
    return kExitNotFound;
  }
  client::Message msg;
  msg.kind = client::MessageKind::Image;
  msg.topic = result->topic.empty() ? opts.topic : result->topic;
  msg.channel_id = result->channel_id;
  msg.seq = result->seq;
  msg.payload_kind = result->payload_kind;
  msg.payload = result->payload;
  std::string line = opts.json ? client::format_json(msg, **dict) : client::format_text(msg, **dict);
  std::printf("%s\n", line.c_str());
  client.close();
  return kExitOk;
}

}  // namespace

void add_snapshot_command(CLI::App& app, const CommonOptions& common, int& exit_code) {
  auto opts = std::make_shared<SnapshotOptions>();
  CLI::App* cmd = app.add_subcommand("snapshot", "print the cached image of one topic");
  cmd->add_option("topic", opts->topic, "topic, e.g. DEMO/EQ/AAPL")->required()->check(native_path());
  cmd->add_flag("--json", opts->json, "print a JSON line");
  cmd->add_option("--timeout", opts->timeout_ms, "milliseconds to wait for the answer")
      ->check(positive_number());
  cmd->callback([opts, &common, &exit_code]() { exit_code = run_snapshot(*opts, common); });
}

}  // namespace tw::cli
