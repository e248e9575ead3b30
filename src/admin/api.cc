#include "admin/api.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "admin/access.h"
#include "admin/ask.h"
#include "admin/metrics.h"
#include "queue/spool.h"
#include "fields/json.h"
#include "session/listing.h"
#include "tier/access_point.h"

namespace tw::admin {

namespace {

using Json = nlohmann::ordered_json;

std::string dump(const Json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"; }

Json loop_json(const LoopSample& loop, const LoopRates& rates) {
  const reactor::LoopStats& s = loop.snapshot.loop;
  return Json{{"name", loop.name},
              {"role", loop.role},
              {"busy", rates.busy},
              {"turns_per_s", rates.turns_per_s},
              {"turns", s.turns},
              {"events", s.events},
              {"max_turn_us", s.max_turn_ns / 1000},
              {"slow_turns", s.slow_turns},
              {"busy_s", static_cast<double>(s.busy_ns) / 1e9},
              {"channels", loop.snapshot.channels},
              {"connections", loop.snapshot.counters.connections_open}};
}

Json connection_json(const tier::ConnectionInfo& c) {
  return Json{{"id", std::to_string(c.loop) + "-" + std::to_string(c.token)},
              {"client", c.client},
              {"peer", c.peer},
              {"user", c.user},
              {"protocol", c.protocol},
              {"transport", c.transport},
              {"subscriptions", c.subscriptions},
              {"msgs_in", c.msgs_in},
              {"bytes_in", c.bytes_in},
              {"msgs_out", c.msgs_out},
              {"bytes_out", c.bytes_out},
              {"queued_bytes", c.queued_bytes},
              {"slow", c.slow},
              {"lagging_channels", c.lagging_channels},
              {"dropped_messages", c.dropped_messages},
              {"connected_ms", c.connected_ms}};
}

Json channel_json(const ChannelRow& c) {
  return Json{{"id", c.channel_id},     {"topic", c.topic}, {"state", wire::state_name(c.state)}, {"seq", c.seq},
              {"rate", c.rate}, {"subscribers", c.subscribers}, {"provider", c.provider}};
}

// The rows the asker may see: every one for an admin, else those its user's
// LIST_CHANNELS would show (anonymous: the anonymous rules).
void keep_listed(const tier::Broker& broker, const http::Request& req, std::vector<ChannelRow>& rows) {
  if (req.admin) return;
  const Caller caller = caller_of(broker, req);
  if (caller.refused) return rows.clear();
  const auth::Grants* grants = caller.grants.get();
  std::erase_if(rows, [grants](const ChannelRow& row) { return !session::listed_for(grants, row.topic); });
}

// Per-user usage names users: an admin sees every user's, a user its own,
// anonymous none (the anonymous series is everyone's without an account).
void keep_own_usage(const http::Request& req, std::map<std::string, auth::Usage>& users) {
  if (req.admin) return;
  std::erase_if(users, [&req](const auto& entry) { return req.user.empty() || entry.first != req.user; });
}

}  // namespace

std::string Api::event_json() {
  const Statistics::View v = stats_.current();
  const tier::LoopSnapshot& t = v.now.totals;
  Json j{{"time_ms", v.now.wall_ms},
         {"uptime_s", static_cast<double>(v.uptime_ms) / 1000.0},
         // Asked of the loops now; the snapshots' count (up to a tick old) when one did not answer.
         {"connections", v.now.connections ? v.now.connections->open : t.counters.connections_open},
         {"channels", t.channels},
         {"subscriptions", v.now.connections ? v.now.connections->subscriptions : 0},
         {"slow_consumers", v.now.connections ? v.now.connections->slow : 0},
         {"msgs_in", t.router.publishes},
         {"msgs_out", t.router.deliveries},
         {"bytes_in", t.counters.bytes_in},
         {"bytes_out", t.counters.bytes_out},
         {"msgs_in_per_s", v.rates.msgs_in},
         {"msgs_out_per_s", v.rates.msgs_out},
         {"bytes_in_per_s", v.rates.bytes_in},
         {"bytes_out_per_s", v.rates.bytes_out},
         {"slow_consumer_disconnects", t.counters.slow_consumers},
         {"dropped_messages", t.counters.dropped_messages}};
  Json loops = Json::array();
  for (size_t i = 0; i < v.now.loops.size(); ++i) {
    const LoopRates rates = i < v.rates.loops.size() ? v.rates.loops[i] : LoopRates{};
    const Json full = loop_json(v.now.loops[i], rates);
    loops.push_back(Json{{"name", full["name"]},
                         {"role", full["role"]},
                         {"busy", full["busy"]},
                         {"turns_per_s", full["turns_per_s"]},
                         {"max_turn_us", full["max_turn_us"]}});
  }
  j["loops"] = std::move(loops);
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

http::Response Api::metrics(const http::Request& req) {
  if (auto refused = refuse_reader(stats_.broker(), req)) return *refused;
  Statistics::View view;
  view.now = stats_.sample();  // fresh for every scrape; the shared samples keep their interval for the rates
  view.uptime_ms = view.now.wall_ms - stats_.start_wall_ms();
  keep_own_usage(req, view.now.users);
  http::Response r;
  r.content_type = std::string(kMetricsContentType);
  const tier::HaStatus ha = stats_.broker().ha_status();
  r.body = render_metrics(view, stats_.broker().http_stats(), stats_.broker().spool(), stats_.broker().links(),
                          ha.enabled ? &ha : nullptr);
  return r;
}

http::Response Api::healthz(const http::Request&) { return http::Response::text(200, "ok\n"); }

// Ready when every loop thread answers within the timeout: the loops turn.
http::Response Api::readyz(const http::Request&) {
  std::vector<tier::LoopInbox*> all;
  for (const auto& loop : stats_.broker().loops()) all.push_back(&inbox_of(loop));
  if (!ask_all<bool>(all, [](size_t) { return true; })) return http::Response::text(503, "loops not answering\n");
  return http::Response::text(200, "ready\n");
}

http::Response Api::stats(const http::Request& req) {
  if (auto refused = refuse_reader(stats_.broker(), req)) return *refused;
  return http::Response::json(event_json() + "\n");
}

http::Response Api::events(const http::Request& req) {
  if (auto refused = refuse_reader(stats_.broker(), req)) return *refused;
  http::Response r;
  r.content_type = "text/event-stream";
  r.headers.emplace_back("Cache-Control", "no-cache");
  r.body = "data: " + event_json() + "\n\n";
  r.event_interval_ms = 1000;
  r.next_event = [this]() -> std::optional<std::string> { return event_json(); };
  return r;
}

http::Response Api::connections(const http::Request& req) {
  if (auto refused = refuse_non_admin(stats_.broker(), req)) return *refused;
  auto rows = stats_.connections();
  if (!rows) return loop_timeout();
  Json list = Json::array();
  for (const tier::ConnectionInfo& c : *rows) list.push_back(connection_json(c));
  return http::Response::json(dump(Json{{"connections", std::move(list)}}));
}

// Guaranteed messaging's queues (docs/guaranteed.md): as configured, and the store thread's counts.
http::Response Api::queues(const http::Request& req) {
  if (auto refused = refuse_non_admin(stats_.broker(), req)) return *refused;
  const config::BrokerConfig& config = stats_.broker().config();
  const queue::Spool* spool = std::as_const(stats_.broker()).spool();
  Json list = Json::array();
  const queue::Spool::Stats stats = spool ? spool->stats() : queue::Spool::Stats{};
  for (const queue::Spool::QueueStats& s : stats.queues) {
    const config::QueueConfig& q = s.config;
    Json row{{"name", q.name}, {"subscriptions", q.subscriptions}, {"exclusive", q.exclusive},
             {"max_messages", q.max_messages}, {"max_bytes", q.max_bytes}, {"retain_bytes", q.retain_bytes},
             {"retain_age_s", q.retain_age_s}, {"durable_subscription", q.durable_subscription},
             {"created_at_runtime", s.runtime}};
    row.update(Json{{"depth", s.depth}, {"oldest_unacked_ns", s.oldest_ns}, {"bytes", s.bytes}, {"consumers", s.consumers},
                    {"enqueued", s.counts.enqueued}, {"delivered", s.counts.delivered},
                    {"redelivered", s.counts.redelivered}, {"acknowledged", s.counts.acknowledged},
                    {"refused_full", s.counts.refused_full}});
    list.push_back(std::move(row));
  }
  return http::Response::json(dump(Json{{"store", config.store.dir}, {"queues", std::move(list)}}));
}

http::Response Api::channels(const http::Request& req) {
  if (auto refused = refuse_reader(stats_.broker(), req)) return *refused;
  auto rows = stats_.channels(req.param("prefix").value_or(""));
  if (!rows) return loop_timeout();
  keep_listed(stats_.broker(), req, *rows);
  Json list = Json::array();
  for (const ChannelRow& c : *rows) list.push_back(channel_json(c));
  return http::Response::json(dump(Json{{"channels", std::move(list)}}));
}

http::Response Api::services(const http::Request& req) {
  if (auto refused = refuse_reader(stats_.broker(), req)) return *refused;
  auto rows = stats_.channels("");
  if (!rows) return loop_timeout();
  keep_listed(stats_.broker(), req, *rows);
  Json list = Json::array();
  for (const ServiceRow& s : Statistics::services(*rows)) {
    list.push_back(Json{{"name", s.name},
                        {"channels", s.channels},
                        {"subscribers", s.subscribers},
                        {"rate", s.rate},
                        {"providers", s.providers}});
  }
  return http::Response::json(dump(Json{{"services", std::move(list)}}));
}

http::Response Api::loops(const http::Request& req) {
  if (auto refused = refuse_reader(stats_.broker(), req)) return *refused;
  const Statistics::View v = stats_.current();
  Json list = Json::array();
  for (size_t i = 0; i < v.now.loops.size(); ++i) {
    list.push_back(loop_json(v.now.loops[i], i < v.rates.loops.size() ? v.rates.loops[i] : LoopRates{}));
  }
  return http::Response::json(dump(Json{{"loops", std::move(list)}}));
}

// Each [[link]] to an upstream broker and what it carries (tier/broker_link.h).
http::Response Api::links(const http::Request& req) {
  if (auto refused = refuse_reader(stats_.broker(), req)) return *refused;
  Json list = Json::array();
  for (const tier::LinkState& l : stats_.broker().links()) {
    list.push_back(Json{{"name", l.name}, {"connected", l.connected}, {"upstream", l.upstream},
                        {"patterns", l.patterns}, {"channels", l.channels}, {"images", l.images},
                        {"updates", l.updates}, {"statuses", l.statuses}, {"gaps", l.gaps},
                        {"refused", l.refused}, {"connects", l.connects},
                        {"failed_connects", l.failed_connects}, {"published_upstream", l.published_upstream}});
  }
  return http::Response::json(dump(Json{{"links", std::move(list)}}));
}

// The HA pair's state (docs/operations.md, "High availability"): {"enabled": false} without [ha].
http::Response Api::ha(const http::Request& req) {
  if (auto refused = refuse_reader(stats_.broker(), req)) return *refused;
  const tier::HaStatus h = stats_.broker().ha_status();
  if (!h.enabled) return http::Response::json(dump(Json{{"enabled", false}}));
  return http::Response::json(dump(Json{{"enabled", true},
                                        {"name", h.name},
                                        {"role", h.primary ? "primary" : "backup"},
                                        {"serving", h.serving},
                                        {"acknowledging", h.may_acknowledge},
                                        {"epoch", h.epoch},
                                        {"leader", h.leader},
                                        {"ttl_s", h.ttl_s},
                                        {"etcd", h.etcd}}));
}

// The broker's field dictionary (the built-in one and fields_file's), which
// `tickwire` reads to name fields as the broker's JSON surfaces do.
http::Response Api::fields(const http::Request& req) {
  if (auto refused = refuse_reader(stats_.broker(), req)) return *refused;
  return http::Response::json(fields::dictionary_json(fields::broker_dictionary()) + "\n");
}

void Api::install(http::Routes& routes) {
  auto bind = [this](http::Response (Api::*handler)(const http::Request&)) {
    return [this, handler](const http::Request& req) { return (this->*handler)(req); };
  };
  routes.add("GET", "/metrics", bind(&Api::metrics));
  routes.add("GET", "/healthz", bind(&Api::healthz));
  routes.add("GET", "/readyz", bind(&Api::readyz));
  // Health probes answer without credentials; they tell nothing but up and ready.
  routes.open_path("/healthz");
  routes.open_path("/readyz");
  routes.add("GET", "/api/v1/stats", bind(&Api::stats));
  routes.add("GET", "/api/v1/events", bind(&Api::events));
  routes.add("GET", "/api/v1/connections", bind(&Api::connections));
  routes.add("GET", "/api/v1/queues", bind(&Api::queues));
  for (const char* method : {"GET", "POST", "DELETE"}) {
    routes.add(method, "/api/v1/queues/", bind(&Api::queue_action), /*prefix=*/true);
  }
  routes.add("GET", "/api/v1/channels", bind(&Api::channels));
  routes.add("GET", "/api/v1/services", bind(&Api::services));
  routes.add("GET", "/api/v1/loops", bind(&Api::loops));
  routes.add("GET", "/api/v1/links", bind(&Api::links));
  routes.add("GET", "/api/v1/ha", bind(&Api::ha));
  routes.add("GET", "/api/v1/fields", bind(&Api::fields));
  routes.add("GET", "/api/v1/connections/", bind(&Api::subscriptions), /*prefix=*/true);
  routes.add("DELETE", "/api/v1/connections/", bind(&Api::disconnect), /*prefix=*/true);
  routes.add("DELETE", "/api/v1/channels/", bind(&Api::close_channel), /*prefix=*/true);
  routes.add("POST", "/api/v1/publish/", bind(&Api::publish), /*prefix=*/true);
  routes.add("GET", "/api/v1/snapshot/", bind(&Api::snapshot), /*prefix=*/true);
}

}  // namespace tw::admin
