// tickwire queue list [--http HOST:PORT] [--json]
// tickwire queue create NAME -t PATTERN... [--max-messages N] [--max-bytes N] [--exclusive] [--retain-bytes N] [--retain-age-s S]
// tickwire queue browse NAME [--from SEQ] [-n MAX]
// tickwire queue purge NAME
// tickwire queue delete NAME
// The broker's durable queues (docs/guaranteed.md), through its admin API
// (/api/v1/queues; every action but list changes the broker: admins only).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "admin/http_client.h"
#include "tickwire/client/message_format.h"
#include "common.h"

namespace tw::cli {

namespace {

using Json = nlohmann::json;

struct QueueOptions {
  std::string http;  // "" = admin_target's default (common.h)
  bool json = false;
  std::string name;
  std::vector<std::string> subscriptions;
  uint64_t max_messages = 0, max_bytes = 0;  // 0: the broker's default
  bool exclusive = false;
  uint64_t retain_bytes = 0, retain_age_s = 0;
  uint64_t from = 0, max = 100;
};

std::string joined(const Json& patterns) {
  std::string out;
  for (const Json& p : patterns) out += (out.empty() ? "" : ",") + p.get<std::string>();
  return out;
}

int show_queues(const Json& j) {
  if (j["store"].get<std::string>().empty()) {
    std::printf("no store: guaranteed messaging is off (store.dir)\n");
    return kExitOk;
  }
  std::printf("%-24s %10s %9s %12s %12s  %s\n", "QUEUE", "DEPTH", "CONSUMERS", "BYTES", "ACKED", "SUBSCRIPTIONS");
  for (const Json& q : j["queues"]) {
    std::printf("%-24s %10llu %9llu %12llu %12llu  %s%s\n", q["name"].get<std::string>().c_str(),
                q.value("depth", 0ull), q.value("consumers", 0ull), q.value("bytes", 0ull),
                q.value("acknowledged", 0ull), joined(q["subscriptions"]).c_str(),
                q.value("durable_subscription", false) ? " (durable subscription)"
                : q["exclusive"].get<bool>()          ? " (exclusive)"
                                                      : "");
  }
  return kExitOk;
}

// One admin API call; its JSON answer, or nullopt after saying why on stderr.
std::optional<Json> call(const QueueOptions& opts, const CommonOptions& common, const char* method,
                         const std::string& path, const std::string& body = {}) {
  auto target = admin_target(common, opts.http);
  if (!target) {
    std::fprintf(stderr, "tickwire queue: %s\n", target.error().message.c_str());
    return std::nullopt;
  }
  auto reply = admin::http_request(*target, method, path, body, body.empty() ? "" : "application/json");
  const Json j = reply ? Json::parse(reply->body, nullptr, false) : Json();
  if (!reply || reply->status != 200 || j.is_discarded()) {
    const std::string why = !reply ? reply.error().message
                            : j.is_object() && j.contains("message") ? j["message"].get<std::string>()
                                                                     : "HTTP " + std::to_string(reply->status) + " " + reply->body;
    std::fprintf(stderr, "tickwire queue: %s %s: %s\n", method, path.c_str(), why.c_str());
    return std::nullopt;
  }
  return j;
}

int run_create(const QueueOptions& opts, const CommonOptions& common) {
  Json body{{"subscriptions", opts.subscriptions}, {"exclusive", opts.exclusive}};
  if (opts.max_messages) body["max_messages"] = opts.max_messages;
  if (opts.max_bytes) body["max_bytes"] = opts.max_bytes;
  if (opts.retain_bytes) body["retain_bytes"] = opts.retain_bytes;
  if (opts.retain_age_s) body["retain_age_s"] = opts.retain_age_s;
  if (!call(opts, common, "POST", "/api/v1/queues/" + opts.name, body.dump())) return kExitError;
  std::printf("created queue %s\n", opts.name.c_str());
  return kExitOk;
}

int run_browse(const QueueOptions& opts, const CommonOptions& common) {
  auto j = call(opts, common, "GET", "/api/v1/queues/" + opts.name + "/messages?from=" + std::to_string(opts.from) +
                                       "&max=" + std::to_string(opts.max));
  if (!j) return kExitError;
  if (opts.json) {
    std::printf("%s\n", j->dump().c_str());
    return kExitOk;
  }
  for (const Json& m : (*j)["messages"]) {
    const std::string payload = m.contains("payload") ? m["payload"].get<std::string>()
                                                      : "hex=" + m["payload_hex"].get<std::string>();
    std::printf("%s seq=%llu %s %s\n", opts.name.c_str(), m["seq"].get<unsigned long long>(),
                client::terminal_safe(m["topic"].get<std::string>()).c_str(), client::terminal_safe(payload).c_str());
  }
  return kExitOk;
}

int run_purge(const QueueOptions& opts, const CommonOptions& common) {
  auto j = call(opts, common, "POST", "/api/v1/queues/" + opts.name + "/purge");
  if (!j) return kExitError;
  std::printf("purged queue %s: %llu messages\n", opts.name.c_str(), (*j)["messages"].get<unsigned long long>());
  return kExitOk;
}

int run_delete(const QueueOptions& opts, const CommonOptions& common) {
  if (!call(opts, common, "DELETE", "/api/v1/queues/" + opts.name)) return kExitError;
  std::printf("deleted queue %s\n", opts.name.c_str());
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
  list->callback([opts, &common, &exit_code]() {
    exit_code = show_admin_json(common, opts->http, "/api/v1/queues", "queues", "tickwire queue", opts->json, show_queues);
  });

  CLI::App* create = cmd->add_subcommand("create", "a queue, kept across restarts (admins only)");
  create->add_option("name", opts->name, "its name: letters, digits, - _ .")->required();
  create->add_option("-t,--subscription", opts->subscriptions, "a topic pattern it attracts (repeat for more)")
      ->required();
  create->add_option("--max-messages", opts->max_messages, "unacknowledged messages it may hold (default 1000000)");
  create->add_option("--max-bytes", opts->max_bytes, "its log on disk (default 1 GiB)");
  create->add_flag("--exclusive", opts->exclusive, "one consumer at a time gets everything");
  create->add_option("--retain-bytes", opts->retain_bytes,
                     "keep acknowledged messages for replay while its log is within this (default 0: none)");
  create->add_option("--retain-age-s", opts->retain_age_s, "and only while younger than this (default 0: any age)");
  create->callback([opts, &common, &exit_code]() { exit_code = run_create(*opts, common); });

  CLI::App* browse = cmd->add_subcommand("browse", "the messages it holds, without consuming them (admins only)");
  browse->add_option("name", opts->name, "the queue")->required();
  browse->add_option("--from", opts->from, "from this sequence number (default: the oldest held)");
  browse->add_option("-n,--max", opts->max, "at most this many (default 100)");
  browse->add_flag("--json", opts->json, "the admin API's JSON as it is");
  browse->callback([opts, &common, &exit_code]() { exit_code = run_browse(*opts, common); });

  CLI::App* purge = cmd->add_subcommand("purge", "drop every message it holds (admins only)");
  purge->add_option("name", opts->name, "the queue")->required();
  purge->callback([opts, &common, &exit_code]() { exit_code = run_purge(*opts, common); });

  CLI::App* del = cmd->add_subcommand("delete", "a queue created with create, with no consumer bound (admins only)");
  del->add_option("name", opts->name, "the queue")->required();
  del->callback([opts, &common, &exit_code]() { exit_code = run_delete(*opts, common); });
}

}  // namespace tw::cli
