// tickwire channels [SERVICE] [--json] [--timeout MS]
// Lists the broker's open channels (all, or one service's): TOPIC, STATE,
// PROVIDER, SUBSCRIBERS, SEQ, RATE/s, then channels per provider so load
// balancing is visible. An empty listing is not an error (exit 0).
#include <cstdio>

#include "channel_listing.h"
#include "tickwire/client/message_format.h"
#include "topic/topic.h"
#include "common.h"

namespace tw::cli {

namespace {

struct ChannelsOptions {
  std::string service;
  bool json = false;
  int timeout_ms = 5000;
};

int run_channels(const ChannelsOptions& opts, const CommonOptions& common) {
  // The broker lists by service (a topic's first level); anything else would list nothing, silently.
  if (!opts.service.empty() && (opts.service.find('/') != std::string::npos ||
                                topic::validate_topic(opts.service, topic::Limits{}) != topic::Error::Ok)) {
    const std::string given = client::terminal_safe(opts.service);
    const std::string first = client::terminal_safe(topic::service_of(opts.service));
    std::fprintf(stderr,
                 "tickwire channels: '%s' is not a service; give a service (a topic's first level, such as '%s') "
                 "or nothing for every channel\n",
                 given.c_str(), first.c_str());
    return kExitError;
  }
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
    if (opts.service.empty()) std::printf("no channels\n");
    else std::printf("no channels in service %s\n", client::terminal_safe(opts.service).c_str());
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
  cmd->add_option("--timeout", opts->timeout_ms, "milliseconds to wait for the answer")->check(positive_number());
  cmd->callback([opts, &common, &exit_code]() { exit_code = run_channels(*opts, common); });
}

}  // namespace tw::cli
