// tickwire ha status [--http HOST:PORT] [--json]
// An HA pair's member, from its admin API (GET /api/v1/ha): its role, the
// term's epoch, whether it serves and acknowledges, and who leads
// (docs/operations.md, "High availability").
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "common.h"

namespace tw::cli {

namespace {

using Json = nlohmann::json;

struct HaOptions {
  std::string http;  // "" = admin_target's default (common.h)
  bool json = false;
};

const char* yes_no(const Json& j, const char* key) { return j.value(key, false) ? "yes" : "no"; }

int print_ha_status(const Json& j) {
  if (!j["enabled"].get<bool>()) {
    std::printf("not in an HA pair ([ha] in the configuration)\n");
    return kExitOk;
  }
  const std::string leader = j.value("leader", "");
  std::printf("%s: %s, epoch %lld, serving %s, acknowledging %s\nprimary: %s\nlease %llu s, etcd",
              j.value("name", "").c_str(), j.value("role", "").c_str(), j.value("epoch", 0ll), yes_no(j, "serving"),
              yes_no(j, "acknowledging"), leader.empty() ? "(none known)" : leader.c_str(), j.value("ttl_s", 0ull));
  for (const Json& url : j.value("etcd", Json::array())) std::printf(" %s", url.get<std::string>().c_str());
  std::printf("\n");
  return kExitOk;
}

}  // namespace

void add_ha_command(CLI::App& app, const CommonOptions& common, int& exit_code) {
  auto opts = std::make_shared<HaOptions>();
  CLI::App* ha = app.add_subcommand("ha", "an HA pair's member: its role, term and leader");
  ha->require_subcommand(1);
  CLI::App* status = ha->add_subcommand("status", "role, epoch, serving, acknowledging, and the primary");
  status->add_option("--http", opts->http,
                     "the broker's HTTP listener, HOST:PORT (default: $TICKWIRE_HTTP, else the host of --server, "
                     "port 9401)");
  status->add_flag("--json", opts->json, "the admin API's JSON as it is");
  status->callback([opts, &common, &exit_code]() {
    exit_code = show_admin_json(common, opts->http, "/api/v1/ha", "enabled", "tickwire ha", opts->json, print_ha_status);
  });
}

}  // namespace tw::cli
