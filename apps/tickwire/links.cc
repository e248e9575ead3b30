// tickwire links [--http HOST:PORT] [--json]
// The broker's links to upstream brokers (docs/operations.md, "A two-tier
// deployment"), from its admin API (GET /api/v1/links).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "admin/http_client.h"
#include "common.h"

namespace tw::cli {

namespace {

using Json = nlohmann::json;

struct LinksOptions {
  std::string http;  // "" = admin_target's default (common.h)
  bool json = false;
};

void print_links(const Json& links) {
  std::printf("%-16s %-5s %-24s %8s %8s %12s %6s %8s\n", "LINK", "UP", "UPSTREAM", "PATTERNS", "CHANNELS", "MESSAGES",
              "GAPS", "CONNECTS");
  for (const Json& l : links) {
    std::printf("%-16s %-5s %-24s %8llu %8llu %12llu %6llu %8llu\n", l["name"].get<std::string>().c_str(),
                l["connected"].get<bool>() ? "yes" : "no", l["upstream"].get<std::string>().c_str(),
                l.value("patterns", 0ull), l.value("channels", 0ull),
                l.value("images", 0ull) + l.value("updates", 0ull), l.value("gaps", 0ull), l.value("connects", 0ull));
  }
}

int show_links(const Json& j) {
  if (j["links"].empty()) {
    std::printf("no links ([[link]] in the configuration)\n");
    return kExitOk;
  }
  print_links(j["links"]);
  return kExitOk;
}

int run_links(const LinksOptions& opts, const CommonOptions& common) {
  return show_admin_json(common, opts.http, "/api/v1/links", "links", "tickwire links", opts.json, show_links);
}

}  // namespace

void add_links_command(CLI::App& app, const CommonOptions& common, int& exit_code) {
  auto opts = std::make_shared<LinksOptions>();
  CLI::App* cmd = app.add_subcommand("links", "the broker's links to upstream brokers: state, upstream, interest, rates");
  cmd->add_option("--http", opts->http,
                  "the broker's HTTP listener, HOST:PORT (default: $TICKWIRE_HTTP, else the host of --server, "
                  "port 9401)");
  cmd->add_flag("--json", opts->json, "the admin API's JSON as it is");
  cmd->callback([opts, &common, &exit_code]() { exit_code = run_links(*opts, common); });
}

}  // namespace tw::cli
