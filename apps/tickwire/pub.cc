// tickwire pub TOPIC [--field NAME=VALUE ...] [--data TEXT] [--count N] [--rate R] [--image]
#include <chrono>
#include <cstdio>
#include <thread>

#include "common.h"
#include "field_args.h"

namespace tw::cli {

namespace {

struct PubOptions {
  std::string topic;
  std::vector<std::string> fields;
  std::string data;
  uint64_t count = 1;
  double rate = 0;
  bool image = false;
};

// Publishes, waiting out back pressure instead of dropping the message.
bool publish_one(client::Client& client, client::PublisherId id, std::span<const uint8_t> payload, bool image) {
  for (;;) {
    Status sent = client.publish(id, payload, image);
    if (sent) return true;
    if (!client.connected() || g_stop_requested) {
      std::fprintf(stderr, "tickwire pub: %s\n", sent.error().message.c_str());
      return false;
    }
    client.poll(1);
  }
}

int run_pub(const PubOptions& opts, const CommonOptions& common, bool data_given) {
  auto dict = dictionary(common);
  if (!dict) {
    std::fprintf(stderr, "tickwire pub: %s\n", dict.error().message.c_str());
    return kExitError;
  }
  std::vector<uint8_t> payload(opts.data.begin(), opts.data.end());
  wire::PayloadKind kind = data_given ? wire::PayloadKind::Opaque : wire::PayloadKind::FieldList;
  if (!data_given) {
    auto built = build_field_list(opts.fields, **dict);
    if (!built) {
      std::fprintf(stderr, "tickwire pub: %s\n", built.error().message.c_str());
      return kExitError;
    }
    payload = std::move(*built);
  }
  auto options = client_options(common, "tickwire-pub");
  if (!options) {
    std::fprintf(stderr, "tickwire pub: %s\n", options.error().message.c_str());
    return kExitError;
  }
  options->reconnect = false;
  client::Client client;
  bool broker_error = false;
  client.on_error([&](const client::ErrorInfo& e) {
    broker_error = true;
    std::fprintf(stderr, "tickwire pub: broker error %s: %.*s\n", wire::code_name(e.code),
                 static_cast<int>(e.text.size()), e.text.data());
  });
  auto id = client.advertise(opts.topic, kind);
  if (!id) {
    std::fprintf(stderr, "tickwire pub: %s\n", id.error().message.c_str());
    return kExitError;
  }
  if (!connect_or_report(client, *options)) return kExitError;

  auto start = std::chrono::steady_clock::now();
  uint64_t sent = 0;
  for (; sent < opts.count && !g_stop_requested; ++sent) {
    if (opts.rate > 0) {
      auto due = start + std::chrono::duration<double>(static_cast<double>(sent) / opts.rate);
      while (std::chrono::steady_clock::now() < due && !g_stop_requested) client.poll(1);
    }
    if (!publish_one(client, *id, payload, opts.image)) break;
    if (sent % 1024 == 1023) client.poll(0);
  }
  // A snapshot is answered after every earlier frame of this connection has
  // been handled, so it confirms the publishes (or surfaces the broker's ERROR).
  auto confirm = client.snapshot(opts.topic, 5000);
  if (broker_error || !confirm || !confirm->found) {
    if (!broker_error)
      std::fprintf(stderr, "tickwire pub: could not confirm the publish: %s\n",
                   confirm ? "topic not found" : confirm.error().message.c_str());
    return kExitError;
  }
  std::printf("published %llu message%s to %s (seq=%llu)\n", static_cast<unsigned long long>(sent),
              sent == 1 ? "" : "s", opts.topic.c_str(), static_cast<unsigned long long>(confirm->seq));
  client.close();
  return sent == opts.count ? kExitOk : kExitError;
}

}  // namespace

void add_pub_command(CLI::App& app, const CommonOptions& common, int& exit_code) {
  auto opts = std::make_shared<PubOptions>();
  CLI::App* cmd = app.add_subcommand("pub", "publish a field list (or opaque data) to a topic");
  cmd->add_option("topic", opts->topic, "topic, e.g. DEMO/EQ/AAPL")->required()->check(native_path());
  auto* field = cmd->add_option("-f,--field", opts->fields, "NAME=VALUE (dictionary name) or ID:TYPE=VALUE");
  auto* data = cmd->add_option("-d,--data", opts->data, "publish TEXT as an opaque payload");
  field->excludes(data);
  data->excludes(field);
  cmd->add_option("-n,--count", opts->count, "messages to publish")->check(positive_number());
  cmd->add_option("-r,--rate", opts->rate, "messages per second, 0 = as fast as possible")
      ->check(non_negative_number());
  cmd->add_flag("--image", opts->image, "replace the cached image instead of merging");
  cmd->callback([opts, &common, &exit_code, data, field]() {
    if (data->count() == 0 && field->count() == 0)
      throw CLI::ValidationError("--field/--data", "pub needs --field NAME=VALUE or --data TEXT");
    exit_code = run_pub(*opts, common, data->count() > 0);
  });
}

}  // namespace tw::cli
