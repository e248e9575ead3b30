#include "fix/gateway.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "tickwire/client/options.h"
#include "http/server.h"
#include "io/socket.h"

namespace tw::fix {
namespace {

void sample(std::string& out, const char* name, uint64_t value, const std::string& labels = {}) {
  out += name;
  if (!labels.empty()) out += "{" + labels + "}";
  out += " " + std::to_string(value) + "\n";
}

void family(std::string& out, const char* name, const char* type, const char* help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

// "host:port", port 0 allowed (any free port: --port-file tells which).
bool split_listen_address(const std::string& text, std::string& host, uint16_t& port) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  int value = 0;
  for (size_t i = colon + 1; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9' || value > 65535) return false;
    value = value * 10 + (text[i] - '0');
  }
  if (colon + 1 == text.size() || value > 65535) return false;
  host = text.substr(0, colon);
  port = static_cast<uint16_t>(value);
  return true;
}

std::string label(const char* key, const std::string& value) { return std::string(key) + "=\"" + value + "\""; }

}  // namespace

Gateway::Gateway(GatewayConfig config)
    : config_(std::move(config)), router_(config_, [this](const std::string& s) { return engine_->logged_on(s); }) {
  std::vector<SessionSpec> specs;
  for (const auto& s : config_.sessions) specs.push_back(s.spec);
  engine_ = make_engine(specs, *this);
}

Gateway::~Gateway() { stop(); }

Status Gateway::start() {
  if (!config_.broker.empty()) {
    client::Options options;
    if (!client::parse_server_address(config_.broker, options.host, options.port))
      return Error{"broker: '" + config_.broker + "' is not host:port"};
    options.client_name = config_.name;
    options.user = config_.broker_user;
    options.password = config_.broker_password;
    drop_copies_ = std::make_unique<DropCopyPublisher>(options, config_.topic_prefix);
    drop_copies_->start();
  }
  std::string why;
  if (!engine_->start(&why)) return Error{"FIX sessions: " + why};
  return start_metrics();
}

void Gateway::stop() {
  if (http_) http_->stop();
  if (engine_) engine_->stop();
  if (drop_copies_) drop_copies_->stop();
}

Status Gateway::start_metrics() {
  if (config_.metrics.empty()) return Ok{};
  std::string host;
  uint16_t port = 0;
  if (!split_listen_address(config_.metrics, host, port))
    return Error{"metrics: '" + config_.metrics + "' is not host:port"};
  auto fd = io::listen_tcp(host, port);
  if (!fd) return fd.error();
  metrics_port_ = io::local_port(*fd);
  http::Routes routes;
  routes.add("GET", "/metrics", [this](const http::Request&) {
    http::Response r = http::Response::text(200, render_metrics());
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return r;
  });
  routes.add("GET", "/api/v1/fix", [this](const http::Request&) { return http::Response::json(render_json()); });
  http_ = std::make_unique<http::Server>(http::ServerSettings{}, std::move(routes), nullptr);
  http_->add_listener(http::ListenSocket{*fd, nullptr, "metrics tcp://" + config_.metrics});
  http_->start();
  return Ok{};
}

void Gateway::on_logon(const std::string& session) { std::fprintf(stderr, "tickwire-fix: %s logged on\n", session.c_str()); }

void Gateway::on_logout(const std::string& session) {
  std::fprintf(stderr, "tickwire-fix: %s logged out\n", session.c_str());
}

Verdict Gateway::on_message(const std::string& session, const FixMessage& message, bool poss_dup) {
  Router::Actions actions;
  {
    std::lock_guard lock(mutex_);
    actions = router_.on_message(session, message, poss_dup);
    // Queued under the lock: drop copies keep the order the router decided in.
    if (drop_copies_) drop_copies_->add(std::move(actions.copies));
  }
  if (actions.verdict != kAccepted) return actions.verdict;
  // Outside the lock: QuickFIX locks the target session while sending.
  for (const Outgoing& out : actions.send) engine_->send(out.session, out.message);
  return kAccepted;
}

std::string Gateway::render_metrics() const {
  std::string out;
  auto sessions = engine_->status();
  family(out, "tickwire_fix_session_logged_on", "gauge", "1 while the FIX session is logged on");
  for (const auto& s : sessions) {
    const GatewaySession* gs = config_.session(s.name);
    sample(out, "tickwire_fix_session_logged_on", s.logged_on ? 1 : 0,
           label("session", s.name) + "," + label("role", gs && gs->is_client() ? "client" : "exchange"));
  }
  family(out, "tickwire_fix_session_next_sender_seq", "gauge", "The next MsgSeqNum the gateway sends on the session");
  for (const auto& s : sessions) sample(out, "tickwire_fix_session_next_sender_seq", s.next_sender_seq, label("session", s.name));
  family(out, "tickwire_fix_session_next_target_seq", "gauge", "The next MsgSeqNum the gateway expects on the session");
  for (const auto& s : sessions) sample(out, "tickwire_fix_session_next_target_seq", s.next_target_seq, label("session", s.name));
  std::lock_guard lock(mutex_);
  const RouterCounters& c = router_.counters();
  family(out, "tickwire_fix_routed_total", "counter", "Orders, cancels and replaces forwarded from a client to an exchange");
  for (const auto& [k, v] : c.routed) sample(out, "tickwire_fix_routed_total", v, label("client", k.first) + "," + label("exchange", k.second));
  family(out, "tickwire_fix_reports_total", "counter", "ExecutionReports and OrderCancelRejects forwarded from an exchange to a client");
  for (const auto& [k, v] : c.reports) sample(out, "tickwire_fix_reports_total", v, label("exchange", k.first) + "," + label("client", k.second));
  family(out, "tickwire_fix_refused_total", "counter", "Client messages the gateway answered itself, by reason");
  for (const char* r : {"unknown_destination", "not_entitled", "exchange_down", "unknown_order"}) {
    auto it = c.refused.find(r);
    sample(out, "tickwire_fix_refused_total", it == c.refused.end() ? 0 : it->second, label("reason", r));
  }
  family(out, "tickwire_fix_unroutable_reports_total", "counter", "Exchange reports whose ClOrdID names no client session");
  sample(out, "tickwire_fix_unroutable_reports_total", c.unroutable_reports);
  family(out, "tickwire_fix_open_orders", "gauge", "Orders the gateway remembers for cancels and replaces");
  sample(out, "tickwire_fix_open_orders", router_.open_orders());
  if (drop_copies_) {
    family(out, "tickwire_fix_drop_copies_published_total", "counter", "Drop copies published on the broker");
    sample(out, "tickwire_fix_drop_copies_published_total", drop_copies_->counters().published.load());
    family(out, "tickwire_fix_drop_copies_dropped_total", "counter", "Drop copies not published: broker unreachable or refusing");
    sample(out, "tickwire_fix_drop_copies_dropped_total", drop_copies_->counters().dropped.load());
    family(out, "tickwire_fix_broker_connected", "gauge", "1 while the drop-copy connection to the broker is up");
    sample(out, "tickwire_fix_broker_connected", drop_copies_->connected() ? 1 : 0);
  }
  return out;
}

}  // namespace tw::fix

namespace tw::fix {

std::string Gateway::render_json() const {
  using Json = nlohmann::json;
  Json sessions = Json::array();
  for (const auto& s : engine_->status()) {
    const GatewaySession* gs = config_.session(s.name);
    sessions.push_back({{"name", s.name},
                        {"role", gs && gs->is_client() ? "client" : "exchange"},
                        {"logged_on", s.logged_on},
                        {"next_sender_seq", s.next_sender_seq},
                        {"next_target_seq", s.next_target_seq}});
  }
  std::lock_guard lock(mutex_);
  const RouterCounters& c = router_.counters();
  Json routes = Json::array();
  for (const auto& [k, v] : c.routed) {
    auto back = c.reports.find({k.second, k.first});
    routes.push_back({{"client", k.first}, {"exchange", k.second}, {"routed", v},
                      {"reports", back == c.reports.end() ? 0 : back->second}});
  }
  Json out = {{"sessions", sessions}, {"routes", routes}, {"refused", c.refused},
              {"unroutable_reports", c.unroutable_reports}, {"open_orders", router_.open_orders()}};
  if (drop_copies_)
    out["drop_copies"] = {{"published", drop_copies_->counters().published.load()},
                          {"dropped", drop_copies_->counters().dropped.load()},
                          {"broker_connected", drop_copies_->connected()}};
  return out.dump();
}

}  // namespace tw::fix
