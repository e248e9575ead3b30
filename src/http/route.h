// Routes: what the HTTP listener answers, by method and path. The listener
// (src/http, its own thread, never a loop thread) parses a request, fills a
// Request and calls the one Handler whose route matches; the admin API,
// /metrics and the console register their handlers here
// (docs/operations.md). WebSocket upgrades (/mqtt, /stream) never reach a
// route: the listener hands those connections to a loop.
//
// A Handler runs on the HTTP thread and may block briefly (it reads the
// loops' published snapshots, or waits for a loop's answer); it never runs
// on a loop thread.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tw::http {

struct Request {
  std::string method;  // "GET", "POST", ...
  std::string path;    // percent-decoded, without the query: "/api/v1/channels"
  std::string query;   // raw, without '?': "prefix=Q%2F"
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string peer;    // "127.0.0.1:53122"
  // Set by the listener from HTTP Basic credentials checked against the
  // broker's users (src/auth); "" when none were given or authentication is off.
  std::string user;
  bool admin = false;  // the user may run admin actions (always true when authentication is off)

  // The header's value, "" when absent (`name` in lower case).
  std::string_view header(std::string_view name) const;
  // The query parameter's percent-decoded value, nullopt when absent.
  std::optional<std::string> param(std::string_view name) const;
  // What follows `prefix` in the path ("/api/v1/snapshot/" -> "Q/A"), "" if the path does not start with it.
  std::string_view path_after(std::string_view prefix) const;
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
  // Server-sent events (text/event-stream): when set, the connection stays
  // open after `body` and the listener calls next_event every
  // event_interval_ms on its thread; it returns the next event's data ("" =
  // nothing this time) or nullopt to end the stream.
  std::function<std::optional<std::string>()> next_event;
  uint32_t event_interval_ms = 1000;

  static Response text(int status, std::string body);
  static Response json(std::string body, int status = 200);
};

using Handler = std::function<Response(const Request&)>;

class Routes {
 public:
  // `path` matches exactly; with `prefix`, any path that starts with it
  // (longest prefix wins). A later add for the same method and path replaces the earlier.
  void add(std::string method, std::string path, Handler handler, bool prefix = false);
  // The handler for this request, null when none matches (the listener answers
  // 404, or 405 when the path exists for another method).
  const Handler* find(std::string_view method, std::string_view path) const;
  bool has_path(std::string_view path) const;
  // An open path is answered without credentials, whatever the users file
  // says (health probes); credentials sent to it are not checked.
  void open_path(std::string path) { open_.push_back(std::move(path)); }
  bool is_open(std::string_view path) const;

 private:
  struct Route {
    std::string method;
    std::string path;
    bool prefix = false;
    Handler handler;
  };
  const Route* match(std::string_view path, std::string_view method) const;
  std::vector<Route> routes_;
  std::vector<std::string> open_;  // exact paths
};

// Percent-decoding of a path or query component ('+' is a space only in queries); nullopt on a bad escape.
std::optional<std::string> percent_decode(std::string_view text, bool query);

}  // namespace tw::http
