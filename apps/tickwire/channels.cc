// tickwire channels [SERVICE] [--json] [--timeout MS]
// Lists the broker's open channels (all, or one service's): TOPIC, STATE,
// PROVIDER, SUBSCRIBERS, SEQ, RATE/s, then channels per provider so load
// balancing is visible. An empty listing is not an error (exit 0).
#include <cstdio>

#include "channel_listing.h"
#include "common.h"

namespace tw::cli {

namespace {

struct ChannelsOptions {
  std::string service;
  bool json = false;
  int timeout_ms = 5000;
};

int run_channels(const ChannelsOptions& opts, const CommonOptions& common) {
  auto options = client_options(common, "tickwire-channels");
  if (!options) {
    std::fprintf(stderr, "tickwire channels: %s\n", options.error().message.c_str());
    return kExitError;
  }
  options->reconnect = false;
  client::Client client;
  if (!connect_or_report(client, *options)) return kExitError;
  auto rows = client.list_channels(opts.service, opts.timeout_ms);
  if (!rows) {
    std::fprintf(stderr, "tickwire channels: %s\n", rows.error().message.c_str());
    return kExitError;
  }
  if (opts.json) {
    std::printf("%s\n", format_channel_json(std::move(*rows)).c_str());
  } else if (rows->empty()) {
    std::printf("no channels\n");
  } else {
    std::fputs(format_channel_table(std::move(*rows)).c_str(), stdout);
  }
  client.close();
  return kExitOk;
}

}  // namespace

void add_channels_command(CLI::App& app, const CommonOptions& common, int& exit_code) {
  auto opts = std::make_shared<ChannelsOptions>();
  CLI::App* cmd = app.add_subcommand("channels", "list the broker's open channels and their providers");
  cmd->add_option("service", opts->service, "only this service's channels (default: all)");
  cmd->add_flag("--json", opts->json, "print one JSON object");
  cmd->add_option("--timeout", opts->timeout_ms, "milliseconds to wait for the answer")->check(CLI::PositiveNumber);
  cmd->callback([opts, &common, &exit_code]() { exit_code = run_channels(*opts, common); });
}

}  // namespace tw::cli
