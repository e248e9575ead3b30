// tickwire top [--http HOST:PORT] [--fix HOST:PORT] [--interval MS] [--count N] [--once]
// A terminal view of the broker's live statistics, refreshed in place: the
// totals and rates, each loop's busy fraction, the busiest connections and
// channels. It reads the admin API (docs/operations.md) over HTTP, with
// --user and --password-file as HTTP Basic credentials. Without --http it
// asks $TICKWIRE_HTTP, else the host of --server / $TICKWIRE_SERVER on the
// admin port, 9401 (common.h, admin_target).
// A member of an HA pair says so under the totals: its role, epoch, whether
// it acknowledges guaranteed publishes, and the primary (GET /api/v1/ha).
// A broker with a store shows its durable queues: depth, consumers, the
// oldest unacknowledged message's age, messages in and out per second
// (GET /api/v1/queues, admins).
// A broker with links to upstream brokers ([[link]]) shows each one: its
// state, upstream, interest, and the messages it brings in per second
// (GET /api/v1/links, as `tickwire links`).
// --fix adds a FIX gateway's sessions (state, sequence numbers) and routes
// (orders, their rate, reports back), read from the gateway's own metrics
// listener (GET /api/v1/fix; docs/fix.md), not through the broker.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "admin/http_client.h"
#include "tickwire/client/message_format.h"
#include "common.h"
#include "config/config.h"
#include "terminal.h"

namespace tw::cli {

namespace {

using Json = nlohmann::json;

// The broker computes rates from its samples, taken at most once per 900 ms
// (admin/statistics.h): --once waits this long between its two.
constexpr int kSecondSampleMs = 1000;

struct TopOptions {
  std::string http;  // "" = admin_target's default (common.h)
  std::string fix;   // a FIX gateway's metrics listener, HOST:PORT ("" = none; docs/fix.md)
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

// Counters shown as rates: each one's increase since the frame before, per second.
class Rates {
 public:
  // Call once per frame, before rate().
  void next_frame() {
    const auto now = std::chrono::steady_clock::now();
    seconds_ = std::chrono::duration<double>(now - at_).count();
    at_ = now;
    last_.swap(current_);
    current_.clear();
  }
  double rate(const std::string& name, double total) {
    current_[name] = total;
    auto before = last_.find(name);
    return before != last_.end() && seconds_ > 0 ? (total - before->second) / seconds_ : 0;
  }

 private:
  std::map<std::string, double> last_, current_;
  std::chrono::steady_clock::time_point at_ = std::chrono::steady_clock::now();
  double seconds_ = 0;
};

// An HA pair's member (GET /api/v1/ha): one line; nothing for a broker alone.
void render_ha(std::string& out, const Json& ha) {
  if (!ha.value("enabled", false)) return;
  char line[512];
  std::snprintf(line, sizeof line, "\nHA  %s  epoch %llu  serving %s  acknowledging %s  primary %s\n",
                safe(ha, "role").c_str(), static_cast<unsigned long long>(ha.value("epoch", 0ull)),
                ha.value("serving", false) ? "yes" : "no", ha.value("acknowledging", false) ? "yes" : "no",
                ha.value("leader", std::string()).empty() ? "(none)" : safe(ha, "leader").c_str());
  out += line;
}

// Guaranteed messaging's durable queues (GET /api/v1/queues): nothing without a store.
void render_queues(std::string& out, const Json& queues, Rates& rates) {
  const Json& list = queues.value("queues", Json::array());
  if (queues.value("store", std::string()).empty() || list.empty()) return;
  const double now_ns = static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  out += "\nQUEUE                      DEPTH  CONSUMERS  OLDEST s    IN/s   OUT/s  REFUSED\n";
  char line[512];
  for (const Json& q : list) {
    const std::string name = q.value("name", std::string());
    const double oldest = q.value("oldest_unacked_ns", 0.0);
    std::snprintf(line, sizeof line, "%-24.24s %7s  %9s  %8.1f  %6s  %6s  %7s\n", safe(q, "name").c_str(),
                  human(q.value("depth", 0.0)).c_str(), human(q.value("consumers", 0.0)).c_str(),
                  oldest > 0 ? std::max(0.0, (now_ns - oldest) / 1e9) : 0.0,
                  human(rates.rate("queue in " + name, q.value("enqueued", 0.0))).c_str(),
                  human(rates.rate("queue out " + name, q.value("delivered", 0.0))).c_str(),
                  human(q.value("refused_full", 0.0)).c_str());
    out += line;
  }
}

// The broker's links to upstream brokers (GET /api/v1/links): nothing when it has none.
void render_links(std::string& out, const Json& links, Rates& rates) {
  const Json& list = links.value("links", Json::array());
  if (list.empty()) return;
  out += "\nLINK             UP   UPSTREAM                 PATTERNS  CHANNELS   MSGS/s  GAPS  CONNECTS\n";
  char line[512];
  for (const Json& l : list) {
    const double messages = l.value("images", 0.0) + l.value("updates", 0.0);
    std::snprintf(line, sizeof line, "%-16.16s %-4s %-24.24s %8s  %8s  %7s  %4s  %8s\n", safe(l, "name").c_str(),
                  l.value("connected", false) ? "yes" : "no", safe(l, "upstream").c_str(),
                  human(l.value("patterns", 0.0)).c_str(), human(l.value("channels", 0.0)).c_str(),
                  human(rates.rate("link " + l.value("name", std::string()), messages)).c_str(),
                  human(l.value("gaps", 0.0)).c_str(), human(l.value("connects", 0.0)).c_str());
    out += line;
  }
}

// The FIX gateway's sessions and routes (GET /api/v1/fix on its metrics
// listener); rates are between this frame and the one before.
class FixView {
 public:
  void render(std::string& out, const Json& fix) {
    rates_.next_frame();
    char line[512];
    out += "\nFIX SESSION    ROLE      STATE  NEXT OUT   NEXT IN\n";
    for (const Json& s : fix.value("sessions", Json::array())) {
      std::snprintf(line, sizeof line, "%-14.14s %-9s %-5s  %8s  %8s\n", safe(s, "name").c_str(), safe(s, "role").c_str(),
                    s.value("logged_on", false) ? "up" : "down", human(s.value("next_sender_seq", 0.0)).c_str(),
                    human(s.value("next_target_seq", 0.0)).c_str());
      out += line;
    }
    out += "FIX ROUTE                        ORDERS  ORDERS/s   REPORTS\n";
    for (const Json& r : fix.value("routes", Json::array())) {
      const std::string name = safe(r, "client") + " -> " + safe(r, "exchange");
      const double n = r.value("routed", 0.0);
      std::snprintf(line, sizeof line, "%-30.30s %8s  %8s  %8s\n", name.c_str(), human(n).c_str(),
                    human(rates_.rate(name, n)).c_str(), human(r.value("reports", 0.0)).c_str());
      out += line;
    }
  }

 private:
  Rates rates_;
};

size_t lines_of(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

// One frame of the view; the connections are left out when the user is not an
// admin. With a window `height` (0: none), the lists share the lines the
// totals leave, so that the whole frame fits.
Result<std::string> frame(const admin::HttpTarget& target, size_t rows, int height,
                          const std::optional<admin::HttpTarget>& fix_target, FixView& fix_view, Rates& rates) {
  auto stats = get_json(target, "/api/v1/stats");
  if (!stats) return stats.error();
  auto channels = get_json(target, "/api/v1/channels");
  if (!channels) return channels.error();
  auto connections = get_json(target, "/api/v1/connections");
  std::string out;
  render_totals(out, *stats);
  if (auto ha = get_json(target, "/api/v1/ha"); ha) render_ha(out, *ha);
  rates.next_frame();
  if (auto queues = get_json(target, "/api/v1/queues"); queues) render_queues(out, *queues, rates);
  if (auto links = get_json(target, "/api/v1/links"); links) render_links(out, *links, rates);
  if (fix_target) {
    auto fix = get_json(*fix_target, "/api/v1/fix");
    if (!fix) return Error{"the FIX gateway (--fix): " + fix.error().message};
    fix_view.render(out, *fix);
  }
  size_t connection_rows = connections ? rows : 0;
  size_t channel_rows = rows;
  if (height > 0) {
    const size_t used = lines_of(out) + (connections ? 4 : 2);  // each list: a blank line and its header
    const size_t left = static_cast<size_t>(height) > used ? static_cast<size_t>(height) - used : 0;
    const size_t channels_want = std::min(rows, (*channels)["channels"].size());
    const size_t connections_want = connections ? std::min(rows, (*connections)["connections"].size()) : 0;
    // Half each, and what one list does not need to the other.
    connection_rows = std::min(connections_want, std::max(left / 2, left - std::min(left, channels_want)));
    channel_rows = std::min(rows, left - std::min(left, connection_rows));
  }
  if (connections) render_connections(out, (*connections)["connections"], connection_rows);
  render_channels(out, (*channels)["channels"], channel_rows);
  return out;
}

Result<admin::HttpTarget> http_target(const TopOptions& opts, const CommonOptions& common) {
  return admin_target(common, opts.http);
}

int report(const Error& error, const TopOptions& opts, const admin::HttpTarget& target) {
  std::fprintf(stderr, "tickwire top: %s\n", error.message.c_str());
  if (opts.http.empty()) {
    std::fprintf(stderr,
                 "tickwire top: asked the admin API on the --server host, %s:%u; "
                 "give --http HOST:PORT where the broker's http_listen is elsewhere\n",
                 target.host.c_str(), static_cast<unsigned>(target.port));
  }
  return kExitError;
}

// Waits up to ms; true when the user pressed q (or a signal asked to stop).
bool quit_within(KeyInput& keys, int ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!g_stop_requested) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    const char key = keys.wait_key(static_cast<int>(std::min<long>(left.count(), 100)));
    if (key == 'q' || key == 'Q') return true;
  }
  return true;
}

// --once: the broker's rates are between its last two samples, so a first
// request makes one and the view is the second's, a second later.
int run_once(const TopOptions& opts, const admin::HttpTarget& target, const std::optional<admin::HttpTarget>& fix) {
  if (auto first = get_json(target, "/api/v1/stats"); !first) return report(first.error(), opts, target);
  Rates rates;  // the first sample of the queues' and links' rates
  std::string ignored;
  rates.next_frame();
  if (auto queues = get_json(target, "/api/v1/queues"); queues) render_queues(ignored, *queues, rates);
  if (auto links = get_json(target, "/api/v1/links"); links) render_links(ignored, *links, rates);
  FixView fix_view;
  if (fix) {  // the first sample of the FIX routes' rates
    auto first = get_json(*fix, "/api/v1/fix");
    if (!first) return report(Error{"the FIX gateway (--fix): " + first.error().message}, opts, target);
    std::string ignored;
    fix_view.render(ignored, *first);
  }
  KeyInput no_keys{false};
  if (quit_within(no_keys, kSecondSampleMs)) return kExitOk;
  auto text = frame(target, opts.rows, 0, fix, fix_view, rates);
  if (!text) return report(text.error(), opts, target);
  std::fwrite(text->data(), 1, text->size(), stdout);
  return kExitOk;
}

int run_top(const TopOptions& opts, const CommonOptions& common) {
  auto target = http_target(opts, common);
  if (!target) {
    std::fprintf(stderr, "tickwire top: %s\n", target.error().message.c_str());
    return kExitError;
  }
  std::optional<admin::HttpTarget> fix;
  if (!opts.fix.empty()) {
    fix.emplace();
    if (!config::split_host_port(opts.fix, fix->host, fix->port)) {
      std::fprintf(stderr, "tickwire top: --fix %s is not HOST:PORT\n", opts.fix.c_str());
      return kExitError;
    }
  }
  if (opts.once) return run_once(opts, *target, fix);
  const bool on_terminal = ::isatty(STDOUT_FILENO);
  KeyInput keys;
  FixView fix_view;
  Rates rates;
  for (int n = 0; !g_stop_requested; ++n) {
    const TerminalSize window = on_terminal ? terminal_size(STDOUT_FILENO) : TerminalSize{};
    auto text = frame(*target, opts.rows, window.rows, fix, fix_view, rates);
    if (!text) return report(text.error(), opts, *target);
    // Home and clear, then a frame that fits: the view refreshes in place.
    const std::string screen = "\x1b[H\x1b[J" + fit_to(*text, window.rows, window.cols);
    std::fwrite(screen.data(), 1, screen.size(), stdout);
    std::fflush(stdout);
    if (opts.count > 0 && n + 1 >= opts.count) break;
    if (quit_within(keys, opts.interval_ms)) break;
  }
  std::fputc('\n', stdout);  // the shell's prompt below the last frame
  return kExitOk;
}

}  // namespace

void add_top_command(CLI::App& app, const CommonOptions& common, int& exit_code) {
  auto opts = std::make_shared<TopOptions>();
  CLI::App* cmd = app.add_subcommand("top", "a live view of the broker's statistics (its HTTP admin API)");
  cmd->add_option("--http", opts->http,
                  "the broker's HTTP listener, HOST:PORT (default: $TICKWIRE_HTTP, else the host of --server / "
                  "$TICKWIRE_SERVER, port 9401: 127.0.0.1:9401 when none is set)");
  cmd->add_option("--fix", opts->fix,
                  "also show a FIX gateway (tickwire-fix): its metrics listener, HOST:PORT (docs/fix.md)");
  cmd->add_option("--interval", opts->interval_ms, "milliseconds between refreshes")->check(CLI::PositiveNumber);
  cmd->add_option("--count", opts->count, "stop after this many refreshes (default: until Ctrl-C)");
  cmd->add_option("--rows", opts->rows, "connections and channels shown (the busiest)");
  cmd->add_flag("--once", opts->once,
                "print one view as plain text and exit; it takes two samples a second apart, so its rates are "
                "over that second");
  cmd->footer("Keys: q quits. The view fits the terminal's window (the lists get the lines the totals leave).");
  cmd->callback([opts, &common, &exit_code]() { exit_code = run_top(*opts, common); });
}

}  // namespace tw::cli
