#include "common.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "fields/json.h"
#include "config/config.h"

namespace tw::cli {

namespace {
// The admin listener's default port, on the native server's host.
constexpr uint16_t kDefaultHttpPort = 9401;
constexpr int kDictionaryTimeoutMs = 1'000;
}  // namespace

volatile std::sig_atomic_t g_stop_requested = 0;

namespace {
void request_stop(int) { g_stop_requested = 1; }
}  // namespace

void install_stop_signals() {
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
}

Result<client::Options> client_options(const CommonOptions& common, const std::string& client_name) {
  client::Options options;
  std::string server = client::resolve_server(common.server);
  if (auto parsed = client::parse_server_list(server, options); !parsed) return parsed.error();
  options.client_name = common.client_name.empty() ? client_name : common.client_name;
  options.tls = wants_tls(common);
  options.ca = common.ca;
  options.cert = common.cert;
  options.key = common.key;
  if (!common.user.empty()) {
    auto password = client::resolve_password(common.password_file);
    if (!password) return password.error();
    options.user = common.user;
    options.password = std::move(*password);
  }
  return options;
}

bool connect_or_report(client::Client& client, const client::Options& options) {
  Status connected = client.connect(options);
  if (!connected) std::fprintf(stderr, "tickwire: %s\n", connected.error().message.c_str());
  return connected.ok();
}

namespace {

// Letters to change, add or drop to turn `a` into `b` (Levenshtein distance).
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// CLI11's own PositiveNumber and NonNegativeNumber print their range up to
// the largest double (300 digits); these say the rule in words.
CLI::Validator number_check(bool zero_allowed) {
  return CLI::Validator(
      [zero_allowed](std::string& text) -> std::string {
        double value = 0;
        const bool number = CLI::detail::lexical_cast(text, value);
        if (number && (value > 0 || (zero_allowed && value == 0))) return {};
        return std::string(zero_allowed ? "must be 0 or more" : "must be more than 0") + ", got '" + text + "'";
      },
      zero_allowed ? "NUMBER>=0" : "NUMBER>0");
}

}  // namespace

std::string unknown_subcommand_message(CLI::App& app) {
  // The deepest subcommand given (tickwire, or tickwire perf) is the one that lacks its own.
  CLI::App* at = &app;
  while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
  const std::vector<std::string> rest = app.remaining();
  if (at->get_require_subcommand_min() == 0 || rest.empty() || rest.front().rfind('-', 0) == 0) return "";
  const std::string& given = rest.front();
  std::string names;
  std::string closest;
  size_t closest_distance = 3;  // suggest only a near miss
  for (const CLI::App* sub : at->get_subcommands([](CLI::App*) { return true; })) {
    names += (names.empty() ? "" : ", ") + sub->get_name();
    const size_t distance = edit_distance(given, sub->get_name());
    if (distance < closest_distance) {
      closest_distance = distance;
      closest = sub->get_name();
    }
  }
  std::string command = "tickwire";  // not argv[0], which may be a path
  if (at != &app) command += " " + at->get_name();
  std::string message = command + ": unknown subcommand '" + given + "'";
  if (!closest.empty()) message += " (did you mean '" + closest + "'?)";
  return message + "\nsubcommands: " + names + "\nrun '" + command + " --help' for more\n";
}


namespace {
// The level of `path` that is exactly `wildcard`, or npos.
size_t level_named(std::string_view path, std::string_view wildcard) {
  size_t start = 0;
  for (;;) {
    const size_t slash = path.find('/', start);
    if (path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start) == wildcard) {
      return start;
    }
    if (slash == std::string_view::npos) return std::string_view::npos;
    start = slash + 1;
  }
}
}  // namespace

std::string foreign_wildcard(std::string_view path) {
  if (level_named(path, "#") != std::string_view::npos) {
    return "'#' is MQTT's multi-level wildcard; Tickwire's is '>' (e.g. DEMO/>)";
  }
  if (level_named(path, "+") != std::string_view::npos) {
    return "'+' is MQTT's single-level wildcard; Tickwire's is '*' (e.g. DEMO/*/AAPL)";
  }
  return "";
}

std::string dotted_levels_note(std::string_view path) {
  if (path.find('/') != std::string_view::npos || path.find('.') == std::string_view::npos) return "";
  std::string slashed(path);
  std::replace(slashed.begin(), slashed.end(), '.', '/');
  return "note: '" + std::string(path) + "' is one level: Tickwire separates levels with '/' (" + slashed +
         "), '.' is an ordinary character";
}

CLI::Validator native_path() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        const std::string hint = foreign_wildcard(value);
        return hint.empty() ? std::string() : "'" + value + "': " + hint;
      },
      "", "native_path");
}

CLI::Validator positive_number() { return number_check(false); }
CLI::Validator non_negative_number() { return number_check(true); }

bool connect_retrying(client::Client& client, const client::Options& options, const char* who) {
  uint32_t backoff_ms = options.reconnect_min_ms;
  for (;;) {
    Status connected = client.connect(options);
    if (connected) return true;
    std::fprintf(stderr, "%s: %s\n", who, connected.error().message.c_str());
    if (!client.unreachable() || g_stop_requested) return false;
    std::fprintf(stderr, "%s: retrying in %u ms\n", who, backoff_ms);
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(backoff_ms);
    while (std::chrono::steady_clock::now() < until && !g_stop_requested)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (g_stop_requested) return false;
    backoff_ms = std::min(backoff_ms * 2, options.reconnect_max_ms);
  }
}

Result<admin::HttpTarget> admin_target(const CommonOptions& common, const std::string& http) {
  admin::HttpTarget target;
  const char* from_env = std::getenv("TICKWIRE_HTTP");
  const std::string given = !http.empty() ? http : from_env ? from_env : "";
  if (!given.empty()) {
    if (!config::split_host_port(given, target.host, target.port))
      return Error{"the admin API's address '" + given + "' is not HOST:PORT"};
  } else {
    const std::string server = client::resolve_server(common.server);
    if (!client::parse_server_address(server, target.host, target.port))
      return Error{"invalid server address '" + server + "' (expected HOST:PORT)"};
    target.port = kDefaultHttpPort;
  }
  if (!common.user.empty()) {
    auto password = client::resolve_password(common.password_file);
    if (!password) return password.error();
    target.user = common.user;
    target.password = *password;
  }
  return target;
}

Result<std::string> admin_get(const CommonOptions& common, const std::string& http, const std::string& path) {
  auto target = admin_target(common, http);
  if (!target) return target.error();
  auto reply = admin::http_request(*target, "GET", path);
  if (!reply) return Error{"GET " + path + ": " + reply.error().message};
  if (reply->status != 200) return Error{"GET " + path + ": HTTP " + std::to_string(reply->status) + " " + reply->body};
  return std::move(reply->body);
}

int show_admin_json(const CommonOptions& common, const std::string& http, const std::string& path, const char* key,
                    const char* command, bool raw, const std::function<int(const nlohmann::json&)>& print) {
  auto body = admin_get(common, http, path);
  if (!body) {
    std::fprintf(stderr, "%s: %s\n", command, body.error().message.c_str());
    return kExitError;
  }
  if (raw) {
    std::fputs(body->c_str(), stdout);
    return kExitOk;
  }
  const nlohmann::json answer = nlohmann::json::parse(*body, nullptr, false);
  if (answer.is_discarded() || !answer.contains(key)) {
    std::fprintf(stderr, "%s: the broker's answer to GET %s has no '%s'\n", command, path.c_str(), key);
    return kExitError;
  }
  return print(answer);
}

Result<fields::Dictionary> broker_dictionary(const CommonOptions& common, const std::string& http) {
  auto target = admin_target(common, http);
  if (!target) return target.error();
  // Short: commands that name fields ask first, and a broker without an
  // admin API on that address must not hold them up.
  target->timeout_ms = kDictionaryTimeoutMs;
  const std::string where = target->host + ":" + std::to_string(target->port);
  auto reply = admin::http_request(*target, "GET", "/api/v1/fields");
  if (!reply) return Error{"no admin API at " + where + ": " + reply.error().message};
  if (reply->status != 200) return Error{"the admin API at " + where + " answered " + std::to_string(reply->status)};
  auto dict = fields::parse_dictionary_json(reply->body);
  if (!dict) return Error{"the admin API at " + where + ": " + dict.error().message};
  return dict;
}

Result<const fields::Dictionary*> dictionary(const CommonOptions& common) {
  // Loaded once per process and kept for its lifetime: handlers hold pointers into it.
  static std::unique_ptr<fields::Dictionary> loaded;
  if (loaded) return loaded.get();
  if (common.dictionary_file.empty()) {
    auto from_broker = broker_dictionary(common);
    if (!from_broker) return &fields::Dictionary::builtin();
    loaded = std::make_unique<fields::Dictionary>(std::move(*from_broker));
    return loaded.get();
  }
  auto result = fields::Dictionary::load(common.dictionary_file);
  if (!result) return result.error();
  loaded = std::make_unique<fields::Dictionary>(std::move(*result));
  return loaded.get();
}

}  // namespace tw::cli
