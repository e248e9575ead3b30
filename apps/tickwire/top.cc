// tickwire top [--http HOST:PORT] [--interval MS] [--count N] [--once]
// A terminal view of the broker's live statistics, refreshed in place: the
// totals and rates, each loop's busy fraction, the busiest connections and
// channels. It reads the admin API (docs/operations.md) over HTTP, with
// --user and --password-file as HTTP Basic credentials.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include <nlohmann/json.hpp>

#include "admin/http_client.h"
#include "client/message_format.h"
#include "common.h"
#include "config/config.h"

namespace tw::cli {

namespace {

using Json = nlohmann::json;

struct TopOptions {
  std::string http = "127.0.0.1:9401";
  int interval_ms = 1000;
  int count = 0;      // 0 = until Ctrl-C
  bool once = false;  // one plain frame, no screen control (scripts, tests)
  size_t rows = 10;
};

Result<Json> get_json(const admin::HttpTarget& target, const std::string& path) {
  auto reply = admin::http_request(target, "GET", path);
  if (!reply) return reply.error();
  if (reply->status != 200) {
    return Error{"GET " + path + ": HTTP " + std::to_string(reply->status) + " " + reply->body};
  }
  Json j = Json::parse(reply->body, nullptr, false);
  if (j.is_discarded()) return Error{"GET " + path + ": not JSON"};
  return j;
}

std::string human(double v) {
  char out[32];
  if (v >= 1e9) {
    std::snprintf(out, sizeof out, "%.2fG", v / 1e9);
  } else if (v >= 1e6) {
    std::snprintf(out, sizeof out, "%.2fM", v / 1e6);
  } else if (v >= 1e4) {
    std::snprintf(out, sizeof out, "%.1fK", v / 1e3);
  } else {
    std::snprintf(out, sizeof out, "%.0f", v);
  }
  return out;
}

std::string safe(const Json& j, const char* key) { return client::terminal_safe(j.value(key, std::string())); }

void render_totals(std::string& out, const Json& s) {
  char line[512];
  std::snprintf(line, sizeof line,
                "tickwired  up %.0fs  connections %s  channels %s  subscriptions %s  slow consumers %s\n"
                "msgs in %s/s  out %s/s   bytes in %s/s  out %s/s   (total in %s, out %s)\n\n",
                s.value("uptime_s", 0.0), human(s.value("connections", 0.0)).c_str(),
                human(s.value("channels", 0.0)).c_str(), human(s.value("subscriptions", 0.0)).c_str(),
                human(s.value("slow_consumers", 0.0)).c_str(), human(s.value("msgs_in_per_s", 0.0)).c_str(),
                human(s.value("msgs_out_per_s", 0.0)).c_str(), human(s.value("bytes_in_per_s", 0.0)).c_str(),
                human(s.value("bytes_out_per_s", 0.0)).c_str(), human(s.value("msgs_in", 0.0)).c_str(),
                human(s.value("msgs_out", 0.0)).c_str());
  out += line;
  out += "LOOP          ROLE           BUSY  TURNS/s  MAX TURN us\n";
  for (const Json& l : s.value("loops", Json::array())) {
    std::snprintf(line, sizeof line, "%-13s %-13s %5.1f%%  %7s  %11s\n", safe(l, "name").c_str(),
                  safe(l, "role").c_str(), 100.0 * l.value("busy", 0.0), human(l.value("turns_per_s", 0.0)).c_str(),
                  human(l.value("max_turn_us", 0.0)).c_str());
    out += line;
  }
}

void render_connections(std::string& out, Json list, size_t rows) {
  std::sort(list.begin(), list.end(), [](const Json& a, const Json& b) {
    return a.value("msgs_in", 0.0) + a.value("msgs_out", 0.0) > b.value("msgs_in", 0.0) + b.value("msgs_out", 0.0);
  });
  out += "\nCONNECTION  CLIENT               PEER                  PROTO   SUBS   MSGS IN  MSGS OUT  QUEUED  SLOW\n";
  char line[512];
  for (size_t i = 0; i < list.size() && i < rows; ++i) {
    const Json& c = list[i];
    std::snprintf(line, sizeof line, "%-11s %-20.20s %-21.21s %-6s %5s  %8s  %8s  %6s  %s\n", safe(c, "id").c_str(),
                  safe(c, "client").c_str(), safe(c, "peer").c_str(), safe(c, "protocol").c_str(),
                  human(c.value("subscriptions", 0.0)).c_str(), human(c.value("msgs_in", 0.0)).c_str(),
                  human(c.value("msgs_out", 0.0)).c_str(), human(c.value("queued_bytes", 0.0)).c_str(),
                  c.value("slow", false) ? "yes" : "");
    out += line;
  }
}

void render_channels(std::string& out, Json list, size_t rows) {
  std::sort(list.begin(), list.end(),
            [](const Json& a, const Json& b) { return a.value("rate", 0.0) > b.value("rate", 0.0); });
  out += "\nCHANNEL                                   STATE   SUBS   RATE/s         SEQ  PROVIDER\n";
  char line[512];
  for (size_t i = 0; i < list.size() && i < rows; ++i) {
    const Json& c = list[i];
    std::snprintf(line, sizeof line, "%-41.41s %-7s %4s  %7s  %10s  %s\n", safe(c, "topic").c_str(),
                  safe(c, "state").c_str(), human(c.value("subscribers", 0.0)).c_str(),
                  human(c.value("rate", 0.0)).c_str(), human(c.value("seq", 0.0)).c_str(),
                  safe(c, "provider").c_str());
    out += line;
  }
}

// One frame of the view; the connections are left out when the user is not an admin.
Result<std::string> frame(const admin::HttpTarget& target, size_t rows) {
  auto stats = get_json(target, "/api/v1/stats");
  if (!stats) return stats.error();
  std::string out;
  render_totals(out, *stats);
  if (auto connections = get_json(target, "/api/v1/connections")) {
    render_connections(out, (*connections)["connections"], rows);
  }
  auto channels = get_json(target, "/api/v1/channels");
  if (!channels) return channels.error();
  render_channels(out, (*channels)["channels"], rows);
  return out;
}

int run_top(const TopOptions& opts, const CommonOptions& common) {
  admin::HttpTarget target;
  if (!config::split_host_port(opts.http, target.host, target.port)) {
    std::fprintf(stderr, "tickwire top: --http %s is not HOST:PORT\n", opts.http.c_str());
    return kExitError;
  }
  if (!common.user.empty()) {
    auto password = client::resolve_password(common.password_file);
    if (!password) {
      std::fprintf(stderr, "tickwire top: %s\n", password.error().message.c_str());
      return kExitError;
    }
    target.user = common.user;
    target.password = *password;
  }
  for (int n = 0; !g_stop_requested; ++n) {
    auto text = frame(target, opts.rows);
    if (!text) {
      std::fprintf(stderr, "tickwire top: %s\n", text.error().message.c_str());
      return kExitError;
    }
    // Home and clear: the view refreshes in place.
    std::printf("%s%s", opts.once ? "" : "\x1b[H\x1b[2J", text->c_str());
    std::fflush(stdout);
    if (opts.once || (opts.count > 0 && n + 1 >= opts.count)) break;
    for (int waited = 0; waited < opts.interval_ms && !g_stop_requested; waited += 50) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  return kExitOk;
}

}  // namespace

void add_top_command(CLI::App& app, const CommonOptions& common, int& exit_code) {
  auto opts = std::make_shared<TopOptions>();
  CLI::App* cmd = app.add_subcommand("top", "a live view of the broker's statistics (its HTTP admin API)");
  cmd->add_option("--http", opts->http, "the broker's HTTP listener, HOST:PORT (default 127.0.0.1:9401)");
  cmd->add_option("--interval", opts->interval_ms, "milliseconds between refreshes")->check(CLI::PositiveNumber);
  cmd->add_option("--count", opts->count, "stop after this many refreshes (default: until Ctrl-C)");
  cmd->add_option("--rows", opts->rows, "connections and channels shown (the busiest)");
  cmd->add_flag("--once", opts->once, "print one view as plain text and exit");
  cmd->callback([opts, &common, &exit_code]() { exit_code = run_top(*opts, common); });
}

}  // namespace tw::cli
