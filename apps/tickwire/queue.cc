// tickwire queue list [--http HOST:PORT] [--json]
// The broker's durable queues (docs/guaranteed.md), from its admin API (GET /api/v1/queues).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "admin/http_client.h"
#include "common.h"

namespace tw::cli {

namespace {

using Json = nlohmann::json;

struct QueueOptions {
  std::string http;  // "" = admin_target's default (common.h)
  bool json = false;
};

std::string joined(const Json& patterns) {
  std::string out;
  for (const Json& p : patterns) out += (out.empty() ? "" : ",") + p.get<std::string>();
  return out;
}

int run_list(const QueueOptions& opts, const CommonOptions& common) {
  auto target = admin_target(common, opts.http);
  if (!target) {
    std::fprintf(stderr, "tickwire queue: %s\n", target.error().message.c_str());
    return kExitError;
  }
  auto reply = admin::http_request(*target, "GET", "/api/v1/queues");
  if (!reply || reply->status != 200) {
    std::fprintf(stderr, "tickwire queue: GET /api/v1/queues: %s\n",
                 reply ? ("HTTP " + std::to_string(reply->status) + " " + reply->body).c_str()
                       : reply.error().message.c_str());
    return kExitError;
  }
  if (opts.json) {
    std::fputs(reply->body.c_str(), stdout);
    return kExitOk;
  }
  const Json j = Json::parse(reply->body, nullptr, false);
  if (j.is_discarded() || !j.contains("queues")) {
    std::fprintf(stderr, "tickwire queue: the broker's answer is not the queue list\n");
    return kExitError;
  }
  if (j["store"].get<std::string>().empty()) {
    std::printf("no store: guaranteed messaging is off (store.dir)\n");
    return kExitOk;
  }
  std::printf("%-24s %10s %9s %12s %12s  %s\n", "QUEUE", "DEPTH", "CONSUMERS", "BYTES", "ACKED", "SUBSCRIPTIONS");
  for (const Json& q : j["queues"]) {
    std::printf("%-24s %10llu %9llu %12llu %12llu  %s%s\n", q["name"].get<std::string>().c_str(),
                q.value("depth", 0ull), q.value("consumers", 0ull), q.value("bytes", 0ull),
                q.value("acknowledged", 0ull), joined(q["subscriptions"]).c_str(),
                q["exclusive"].get<bool>() ? " (exclusive)" : "");
  }
  return kExitOk;
}

}  // namespace

void add_queue_command(CLI::App& app, const CommonOptions& common, int& exit_code) {
  auto opts = std::make_shared<QueueOptions>();
  CLI::App* cmd = app.add_subcommand("queue", "the broker's durable queues (guaranteed messaging)");
  cmd->require_subcommand(1, 1);
  cmd->add_option("--http", opts->http,
                  "the broker's HTTP listener, HOST:PORT (default: $TICKWIRE_HTTP, else the host of --server, "
                  "port 9401)");
  CLI::App* list = cmd->add_subcommand("list", "each queue: depth, consumers, bytes on disk, acknowledged, subscriptions");
  list->add_flag("--json", opts->json, "the admin API's JSON as it is");
  list->callback([opts, &common, &exit_code]() { exit_code = run_list(*opts, common); });
}

}  // namespace tw::cli
