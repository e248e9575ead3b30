#include "admin/metrics.h"

#include "admin/process_metrics.h"
#include "base/clock.h"
#include "queue/spool.h"

#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <map>

namespace tw::admin {

namespace {

// Backslash and newline always; the double quote too inside a label value.
std::string escape(std::string_view text, bool quote) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::string escape_label_value(std::string_view value) { return escape(value, true); }
std::string escape_help(std::string_view help) { return escape(help, false); }

void PromText::family(std::string_view name, std::string_view type, std::string_view help) {
  text_ += "# HELP ";
  text_ += name;
  text_ += ' ';
  text_ += escape_help(help);
  text_ += "\n# TYPE ";
  text_ += name;
  text_ += ' ';
  text_ += type;
  text_ += '\n';
}

void PromText::labels(const Labels& labels) {
  if (labels.empty()) return;
  text_ += '{';
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) text_ += ',';
    text_ += labels[i].first;
    text_ += "=\"";
    text_ += escape_label_value(labels[i].second);
    text_ += '"';
  }
  text_ += '}';
}

void PromText::sample(std::string_view name, uint64_t value, const Labels& l) {
  text_ += name;
  labels(l);
  text_ += ' ';
  text_ += std::to_string(value);
  text_ += '\n';
}

void PromText::sample(std::string_view name, double value, const Labels& l) {
  // The shortest text that reads back as the same double: a fixed number of
  // digits (%.9g) would round a time since the epoch to 10 s.
  char number[32];
  const auto end = std::to_chars(number, number + sizeof number, value).ptr;
  text_ += name;
  labels(l);
  text_ += ' ';
  text_.append(number, end);
  text_ += '\n';
}

namespace {

struct Counted {
  const char* name;
  const char* type;
  const char* help;
  uint64_t value;
};

// The broker-wide counts: one family each, no labels.
std::vector<Counted> broker_counts(const Statistics::View& v) {
  const broker::Counters& c = v.now.totals.counters;
  const broker::RouterStats& r = v.now.totals.router;
  return {
      {"tickwire_messages_in_total", "counter", "Messages published into channels (any protocol, REST included).",
       r.publishes},
      {"tickwire_messages_out_total", "counter", "Stream messages delivered to subscribers.", r.deliveries},
      {"tickwire_frames_in_total", "counter", "Frames (packets) received from client connections.", c.frames_in},
      {"tickwire_bytes_in_total", "counter", "Bytes read from client connections.", c.bytes_in},
      {"tickwire_bytes_out_total", "counter", "Bytes written to client connections.", c.bytes_out},
      {"tickwire_connections_accepted_total", "counter", "Client connections accepted.", c.connections_accepted},
      {"tickwire_connections_rejected_total", "counter", "Connections refused past max_connections.",
       c.connections_rejected},
      {"tickwire_channels", "gauge", "Channels held now.", v.now.totals.channels},
      {"tickwire_protocol_errors_total", "counter", "Connections closed for malformed, unknown or invalid input.",
       c.protocol_errors},
      {"tickwire_idle_timeouts_total", "counter", "Connections closed after idle_timeout_ms without input.",
       c.idle_timeouts},
      {"tickwire_slow_consumer_disconnects_total", "counter",
       "Connections closed as slow consumers (policy disconnect).", c.slow_consumers},
      {"tickwire_conflated_channels_total", "counter",
       "Channels held back for a congested subscriber (policy conflate), one per episode.", c.conflated_channels},
      {"tickwire_refresh_images_total", "counter", "Images sent to resume held-back channels.", c.refresh_images},
      {"tickwire_dropped_messages_total", "counter", "Stream messages discarded for slow subscribers (policy drop).",
       c.dropped_messages},
      {"tickwire_drop_notices_total", "counter", "STATUS MESSAGES_DROPPED notices sent.", c.drop_notices},
      {"tickwire_conflation_refreshes_total", "counter", "Merged images of conflated subscriptions (conflate_ms).",
       c.conflation_refreshes},
      {"tickwire_subscription_limit_hits_total", "counter", "Subscriptions refused past max_subscriptions.",
       c.subscription_limit_hits},
      {"tickwire_channel_quota_hits_total", "counter", "REGISTERs refused past max_channels_per_connection.",
       c.channel_quota_hits},
      {"tickwire_user_channel_quota_hits_total", "counter",
       "REGISTERs refused past the user's max_channels (users file, or max_channels_per_user).",
       c.user_channel_quota_hits},
      {"tickwire_stray_provider_messages_total", "counter", "Provider messages for channels it was not asked for.",
       c.stray_provider_messages},
      {"tickwire_partial_input_bytes", "gauge", "Bytes held in partial frames now (max_partial_input).",
       c.partial_input_bytes},
      {"tickwire_partial_input_closes_total", "counter", "Connections closed past max_partial_input.",
       c.partial_input_closes},
      {"tickwire_frame_deadline_closes_total", "counter", "Connections closed past frame_deadline_ms.",
       c.frame_deadline_closes},
      {"tickwire_fd_exhausted_total", "counter", "Connections refused for lack of file descriptors.", c.fd_exhausted},
      {"tickwire_auth_failures_total", "counter", "Logins refused.", c.auth_failures},
      {"tickwire_auth_source_refusals_total", "counter",
       "Logins refused unchecked: auth_max_pending_per_source from one address in progress.", v.now.auth_source_refusals},
      {"tickwire_entitlement_refusals_total", "counter",
       "SUBSCRIBE, REGISTER, PROVIDE refused by entitlements; MQTT resends and Wills dropped as no longer entitled.",
       c.entitlement_refusals},
      {"tickwire_bad_payloads_total", "counter", "Published payloads refused as malformed.", r.bad_payloads},
      {"tickwire_provider_requests_total", "counter", "REQUESTs sent to interactive providers.", r.requests},
      {"tickwire_provider_releases_total", "counter", "RELEASEs sent to interactive providers.", r.releases},
      {"tickwire_provider_request_timeouts_total", "counter", "Provider requests not answered in time.",
       r.request_timeouts},
      {"tickwire_provider_failovers_total", "counter", "Channels re-requested after their provider was lost.",
       r.failovers},
      {"tickwire_not_found_cached_total", "counter", "Requests answered from the NOT_FOUND memory.",
       r.not_found_cached},
      {"tickwire_channels_freed_total", "counter", "Unused channels without a value freed after channel_linger_ms.",
       r.channels_freed},
      {"tickwire_channels_evicted_total", "counter",
       "Unused channels freed with their last value, oldest first, near max_channels.", r.channels_evicted},
      {"tickwire_delay_compactions_total", "counter", "Delayed entries merged to stay within delay_max_bytes.",
       r.delay_compactions},
  };
}

// Open connections per protocol: every protocol the broker speaks has its
// series, 0 when none is open, so that a sum or a graph never lacks one. Left
// without samples when an access point did not answer (as the counts are
// asked of them), rather than filled with a total that has no protocol.
void write_connections(PromText& out, const Statistics::View& v) {
  out.family("tickwire_connections", "gauge", "Client connections open now, by protocol.");
  if (!v.now.connections) return;
  for (const auto& [protocol, count] : v.now.connections->by_protocol) out.sample("tickwire_connections", count, {{"protocol", protocol}});
}

void write_loops(PromText& out, const Statistics::View& v) {
  auto per_loop = [&](const char* name, const char* type, const char* help, auto value) {
    out.family(name, type, help);
    for (const LoopSample& loop : v.now.loops) {
      out.sample(name, value(loop.snapshot.loop), {{"loop", loop.name}, {"role", loop.role}});
    }
  };
  per_loop("tickwire_loop_turns_total", "counter", "Loop turns (one epoll_wait and its work).",
           [](const reactor::LoopStats& s) { return s.turns; });
  per_loop("tickwire_loop_events_total", "counter", "Readiness events handled.",
           [](const reactor::LoopStats& s) { return s.events; });
  per_loop("tickwire_loop_busy_seconds_total", "counter",
           "Time spent in turns (not waiting); its rate is the loop's busy fraction.",
           [](const reactor::LoopStats& s) { return static_cast<double>(s.busy_ns) / 1e9; });
  per_loop("tickwire_loop_max_turn_seconds", "gauge", "The longest turn since start.",
           [](const reactor::LoopStats& s) { return static_cast<double>(s.max_turn_ns) / 1e9; });
  per_loop("tickwire_loop_slow_turns_total", "counter", "Turns longer than 10 ms.",
           [](const reactor::LoopStats& s) { return s.slow_turns; });
}

// Usage accounting per user (docs/security.md), as the usage log counts it.
void write_users(PromText& out, const Statistics::View& v) {
  if (v.now.users.empty()) return;
  auto per_user = [&](const char* name, const char* help, uint64_t auth::Usage::*field) {
    out.family(name, "counter", help);
    for (const auto& [user, usage] : v.now.users) {
      out.sample(name, usage.*field, {{"user", user.empty() ? "(anonymous)" : user}});
    }
  };
  per_user("tickwire_user_logins_total", "Connections opened as this user.", &auth::Usage::logins);
  per_user("tickwire_user_subscriptions_total", "SUBSCRIBEs accepted for this user.", &auth::Usage::subscriptions);
  per_user("tickwire_user_channels_total", "Channel streams started to this user's connections.",
           &auth::Usage::channels);
  per_user("tickwire_user_messages_total", "Stream messages offered to this user's connections.",
           &auth::Usage::messages);
  per_user("tickwire_user_bytes_total", "Bytes written to this user's connections.", &auth::Usage::bytes);
}

// The HTTP listener's counts (src/http/server.h, ServerStats).
void write_http(PromText& out, const http::ServerStats& s) {
  auto count = [&](const char* name, const char* type, const char* help, const std::atomic<uint64_t>& value) {
    out.family(name, type, help);
    out.sample(name, value.load(std::memory_order_relaxed));
  };
  count("tickwire_http_requests_total", "counter", "HTTP requests answered, whatever the status.", s.requests);
  count("tickwire_http_auth_failures_total", "counter", "HTTP requests refused for the credentials they gave (401).",
        s.auth_failures);
  count("tickwire_http_logins_total", "counter", "HTTP Basic credentials sent to the password verifier.", s.logins);
  count("tickwire_http_origin_refused_total", "counter",
        "HTTP writes and WebSocket upgrades refused for a foreign Origin (403).", s.origin_refused);
}

// How long each batch's syncs took (one fdatasync per queue appended to), as
// a Prometheus histogram: cumulative buckets, then the sum and the count.
void write_sync_histogram(PromText& out, const queue::Spool::Stats& g) {
  const char* name = "tickwire_store_batch_sync_seconds";
  out.family(name, "histogram", "How long the store thread's syncs of one batch took (every queue it appended to).");
  uint64_t count = 0;
  const std::string bucket = std::string(name) + "_bucket";
  for (size_t i = 0; i < g.sync_buckets.size(); ++i) {
    count += g.sync_buckets[i];
    char le[32] = "+Inf";
    if (i < queue::Spool::kSyncBucketsNs.size()) {
      std::snprintf(le, sizeof le, "%g", static_cast<double>(queue::Spool::kSyncBucketsNs[i]) / 1e9);
    }
    out.sample(bucket, count, {{"le", le}});
  }
  out.sample(std::string(name) + "_sum", static_cast<double>(g.sync_ns) / 1e9);
  out.sample(std::string(name) + "_count", count);
}

// Guaranteed messaging (docs/guaranteed.md): the store thread's counts and each queue's.
void write_guaranteed(PromText& out, const queue::Spool::Stats& g) {
  auto count = [&](const char* name, const char* type, const char* help, auto value) {
    out.family(name, type, help);
    out.sample(name, value);
  };
  count("tickwire_guaranteed_publishes_total", "counter", "Guaranteed publishes answered OK (durable).", g.publishes);
  out.family("tickwire_guaranteed_refused_total", "counter", "Guaranteed publishes refused, by reason.");
  out.sample("tickwire_guaranteed_refused_total", g.refused_full, {{"reason", "queue_full"}});
  out.sample("tickwire_guaranteed_refused_total", g.refused_disk, {{"reason", "disk"}});
  count("tickwire_guaranteed_unrouted_total", "counter", "Guaranteed publishes no queue attracted.", g.unrouted);
  count("tickwire_store_syncs_total", "counter", "fdatasyncs of queue logs (one per queue per batch).", g.syncs);
  count("tickwire_store_sync_seconds_total", "counter", "Time the store thread spent syncing.",
        static_cast<double>(g.sync_ns) / 1e9);
  count("tickwire_store_max_sync_seconds", "gauge", "The longest batch sync since start.",
        static_cast<double>(g.max_sync_ns) / 1e9);
  write_sync_histogram(out, g);
  auto per_queue = [&](const char* name, const char* type, const char* help, auto value) {
    out.family(name, type, help);
    for (const auto& q : g.queues) out.sample(name, value(q), {{"queue", q.name}});
  };
  using Q = queue::Spool::QueueStats;
  per_queue("tickwire_queue_depth", "gauge", "Messages stored and not acknowledged.", [](const Q& q) { return q.depth; });
  const uint64_t now_ns = realtime_ns();
  per_queue("tickwire_queue_oldest_unacked_age_seconds", "gauge",
            "How long ago the oldest unacknowledged message was stored (0: none).", [&](const Q& q) {
              return q.oldest_ns == 0 || q.oldest_ns > now_ns ? 0.0 : static_cast<double>(now_ns - q.oldest_ns) / 1e9;
            });
  per_queue("tickwire_queue_bytes", "gauge", "The queue's log on disk.", [](const Q& q) { return q.bytes; });
  per_queue("tickwire_queue_consumers", "gauge", "Bindings now.", [](const Q& q) { return uint64_t{q.consumers}; });
  per_queue("tickwire_queue_enqueued_total", "counter", "Messages appended.", [](const Q& q) { return q.counts.enqueued; });
  per_queue("tickwire_queue_delivered_total", "counter", "DELIVERs, redeliveries included.",
            [](const Q& q) { return q.counts.delivered; });
  per_queue("tickwire_queue_redelivered_total", "counter", "DELIVERs flagged redelivered.",
            [](const Q& q) { return q.counts.redelivered; });
  per_queue("tickwire_queue_acknowledged_total", "counter", "Messages acknowledged by consumers.",
            [](const Q& q) { return q.counts.acknowledged; });
  per_queue("tickwire_queue_refused_full_total", "counter", "Publishes refused: this queue was at max_messages or max_bytes.",
            [](const Q& q) { return q.counts.refused_full; });
}

// One series per [[link]], labelled by its name.
void write_links(PromText& out, const std::vector<tier::LinkState>& links) {
  auto per_link = [&](const char* name, const char* type, const char* help, auto value) {
    out.family(name, type, help);
    for (const tier::LinkState& l : links) out.sample(name, value(l), {{"link", l.name}});
  };
  using L = tier::LinkState;
  per_link("tickwire_link_connected", "gauge", "1 while the link's upstream connection is up.",
           [](const L& l) { return uint64_t{l.connected}; });
  per_link("tickwire_link_patterns", "gauge", "Patterns subscribed upstream (aggregated local interest).",
           [](const L& l) { return uint64_t{l.patterns}; });
  per_link("tickwire_link_channels", "gauge", "Topics the link has brought in.", [](const L& l) { return l.channels; });
  per_link("tickwire_link_messages_total", "counter", "Images and updates received upstream.",
           [](const L& l) { return l.images + l.updates; });
  per_link("tickwire_link_gaps_total", "counter", "Upstream updates whose seq was not the previous + 1.",
           [](const L& l) { return l.gaps; });
  per_link("tickwire_link_refused_total", "counter", "Messages this broker refused from the link.",
           [](const L& l) { return l.refused; });
  per_link("tickwire_link_connects_total", "counter", "Upstream connections made.", [](const L& l) { return l.connects; });
  per_link("tickwire_link_failed_connects_total", "counter", "Upstream connection attempts that failed.",
           [](const L& l) { return l.failed_connects; });
}

// An HA pair's member: its role and term (gauges, so an alert can watch both brokers).
void write_ha(PromText& out, const tier::HaStatus& ha) {
  auto gauge = [&](const char* name, const char* help, uint64_t value) {
    out.family(name, "gauge", help);
    out.sample(name, value);
  };
  gauge("tickwire_ha_primary", "1 while this broker holds the HA pair's leader key.", ha.primary);
  gauge("tickwire_ha_serving", "1 while this broker takes client connections.", ha.serving);
  gauge("tickwire_ha_acknowledging", "1 while guaranteed publishes are acknowledged (inside the term's time fence).",
        ha.may_acknowledge);
  gauge("tickwire_ha_epoch", "The current term's epoch (the leader key's create revision in etcd); 0 = unknown.",
        static_cast<uint64_t>(ha.epoch));
}

}  // namespace

std::string render_metrics(const Statistics::View& view, const http::ServerStats* http, const queue::Spool* spool,
                           const std::vector<tier::LinkState>& links, const tier::HaStatus* ha) {
  PromText out;
  for (const Counted& c : broker_counts(view)) {
    out.family(c.name, c.type, c.help);
    out.sample(c.name, c.value);
  }
  write_connections(out, view);
  if (view.now.connections) {
    out.family("tickwire_subscriptions", "gauge", "Subscription patterns held by the open connections.");
    out.sample("tickwire_subscriptions", view.now.connections->subscriptions);
    out.family("tickwire_slow_consumers", "gauge",
               "Connections now over max_output_buffer or with channels held back.");
    out.sample("tickwire_slow_consumers", view.now.connections->slow);
  }
  write_loops(out, view);
  write_users(out, view);
  if (http != nullptr) write_http(out, *http);
  if (spool != nullptr) write_guaranteed(out, spool->stats());
  if (!links.empty()) write_links(out, links);
  if (ha != nullptr) write_ha(out, *ha);
  out.family("tickwire_start_time_seconds", "gauge", "When the broker started, seconds since the Unix epoch.");
  out.sample("tickwire_start_time_seconds",
             static_cast<double>(view.now.wall_ms - view.uptime_ms) / 1000.0);
  out.family("tickwire_build_info", "gauge", "Always 1; the label names the broker's version.");
  out.sample("tickwire_build_info", uint64_t{1}, {{"version", TW_VERSION}});
  if (auto process = read_process_stats()) write_process_metrics(out, *process);
  return out.text();
}

}  // namespace tw::admin
