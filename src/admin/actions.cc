// The admin API's actions: disconnect a client, close a channel (admins
// only), a connection's subscriptions (admins, and each user its own), and
// REST publish and snapshot (the caller's entitlements). Each is
// a job on the loop that owns what it touches (tier/loop_inbox.h): the
// publish enters the router there like any publisher's, so it reaches every
// subscriber of every protocol and costs the others' per-message path nothing.
#include <charconv>

#include <nlohmann/json.hpp>

#include "admin/access.h"
#include "admin/api.h"
#include "admin/ask.h"
#include "admin/collector.h"
#include "base/ascii.h"
#include "fields/json.h"
#include "tier/access_point.h"

namespace tw::admin {

namespace {

using Json = nlohmann::ordered_json;

http::Response ok_json(Json j) {
  return http::Response::json(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

// The HTTP status of a refused router request.
int status_for(wire::Code code) {
  switch (code) {
    case wire::Code::NotFound: return 404;
    case wire::Code::NotAuthorized:
    case wire::Code::NotProvider: return 403;
    case wire::Code::KindMismatch: return 409;
    case wire::Code::TooManyChannels:
    case wire::Code::ChannelQuota: return 503;
    default: return 400;
  }
}

http::Response refused(const broker::Outcome& outcome) {
  return json_error(status_for(outcome.code), wire::code_name(outcome.code), outcome.detail);
}

// "0-17": the access point's index and the connection's token there.
bool parse_connection_id(std::string_view text, uint32_t& loop, uint32_t& token) {
  const size_t dash = text.find('-');
  if (dash == std::string_view::npos) return false;
  auto number = [](std::string_view s, uint32_t& out) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return !s.empty() && ec == std::errc{} && end == s.data() + s.size();
  };
  return number(text.substr(0, dash), loop) && number(text.substr(dash + 1), token);
}

// The media type of a Content-Type header, lower-cased, without its parameters.
std::string media_type_of(std::string_view header) {
  std::string type(header.substr(0, header.find(';')));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.pop_back();
  return ascii::lower(type);
}

constexpr const char* kHowToPublishFields =
    "publish a field list as JSON: -H 'Content-Type: application/json' -d '{\"BID\":189.25}'";
constexpr const char* kHowToPublishOpaque =
    "publish an opaque message as the body itself: -H 'Content-Type: application/octet-stream' (or text/plain)";

// A form (what `curl -d` and `curl -F` send unless told otherwise) is never a
// message: its body would become an opaque message by accident, and the
// channel an opaque one that refuses field lists after it.
bool is_form(const std::string& type) {
  return type == "application/x-www-form-urlencoded" || type == "multipart/form-data";
}

http::Response form_refused(const std::string& type) {
  return json_error(415, "UNSUPPORTED_MEDIA_TYPE",
                    "the body is a form (" + type + ", what curl -d and -F send unless told otherwise), not a message: " +
                        kHowToPublishFields + "; or " + kHowToPublishOpaque);
}

// A 409: the channel carries the other kind than this request's, so say which and how to publish to it.
http::Response kind_refused(const std::string& topic, wire::PayloadKind sent) {
  const bool sent_fields = sent == wire::PayloadKind::FieldList;
  return json_error(409, "KIND_MISMATCH",
                    topic + " carries " + (sent_fields ? "opaque messages" : "field lists") + ", not " +
                        (sent_fields ? "field lists" : "opaque messages") + ": " +
                        (sent_fields ? kHowToPublishOpaque : kHowToPublishFields));
}

// The request's payload: a JSON field list (fields/json.h) when the
// body is JSON, else the body as an opaque message.
Result<std::pair<wire::PayloadKind, std::vector<uint8_t>>> payload_of(const http::Request& req) {
  if (media_type_of(req.header("content-type")) != "application/json") {
    return std::pair{wire::PayloadKind::Opaque, std::vector<uint8_t>(req.body.begin(), req.body.end())};
  }
  auto message = fields::parse_json_message(req.body, fields::broker_dictionary());
  if (!message) return Error{"the body: " + message.error().message};
  if (message->type == "status") return Error{"a \"type\":\"status\" object carries no fields to publish"};
  return std::pair{wire::PayloadKind::FieldList, std::move(message->field_list)};
}

// The loop that owns `topic`'s channel: its inbox, and its router (used only from a job posted there).
std::pair<tier::LoopInbox*, broker::Router*> owner_of(const tier::Broker& broker, const std::string& topic) {
  const tier::Broker::Loop owner = broker.loops()[broker.owner_of(topic)];
  return {&inbox_of(owner), &router_of(owner)};
}

const char* policy_name(wire::SlowPolicy policy) {
  switch (policy) {
    case wire::SlowPolicy::Drop: return "drop";
    case wire::SlowPolicy::Disconnect: return "disconnect";
    default: return "conflate";
  }
}

Json subscription_json(const broker::HeldSubscription& s) {
  return Json{{"pattern", s.pattern},
              {"policy", policy_name(s.policy)},
              {"conflate_ms", s.conflate_ms},
              {"delay_ms", s.delay_ms}};
}

}  // namespace

namespace {

// The access point of a connection id's LOOP part (its index among the access points); null when there is none.
tier::AccessPoint* access_point_at(const tier::Broker& broker, uint32_t index) {
  uint32_t seen = 0;
  for (const auto& loop : broker.loops()) {
    if (loop.access_point && seen++ == index) return loop.access_point;
  }
  return nullptr;
}

}  // namespace

// GET /api/v1/connections/LOOP-TOKEN/subscriptions. An admin sees any
// connection's; another user only those of connections logged in as itself
// (as a non-admin's listings show only what is its own); anyone else's, like
// a connection that is not there, is a 404, so ids reveal nothing.
http::Response Api::subscriptions(const http::Request& req) {
  if (auto refused = refuse_reader(stats_.broker(), req)) return *refused;
  std::string_view id = req.path_after("/api/v1/connections/");
  constexpr std::string_view kSuffix = "/subscriptions";
  if (!id.ends_with(kSuffix)) return json_error(404, "NOT_FOUND", "no such resource");
  id.remove_suffix(kSuffix.size());
  uint32_t index = 0, token = 0;
  if (!parse_connection_id(id, index, token)) {
    return json_error(400, "BAD_REQUEST", "a connection id is LOOP-TOKEN, as /api/v1/connections lists it");
  }
  tier::AccessPoint* ap = access_point_at(stats_.broker(), index);
  if (ap == nullptr) return json_error(404, "NOT_FOUND", "no such connection");
  auto found = ask<std::optional<tier::ConnectionSubscriptions>>(
      ap->inbox(), [ap, token] { return ap->describe_subscriptions(token); });
  if (!found) return loop_timeout();
  const bool visible = *found && (req.admin || (!req.user.empty() && (*found)->user == req.user));
  if (!visible) return json_error(404, "NOT_FOUND", "no such connection");
  Json list = Json::array();
  for (const auto& s : (*found)->patterns) list.push_back(subscription_json(s));
  return ok_json(Json{{"connection", std::string(id)}, {"subscriptions", std::move(list)}});
}

http::Response Api::disconnect(const http::Request& req) {
  if (auto refusal = refuse_non_admin(stats_.broker(), req)) return *refusal;
  uint32_t index = 0, token = 0;
  if (!parse_connection_id(req.path_after("/api/v1/connections/"), index, token)) {
    return json_error(400, "BAD_REQUEST", "a connection id is LOOP-TOKEN, as /api/v1/connections lists it");
  }
  tier::AccessPoint* ap = access_point_at(stats_.broker(), index);
  if (ap == nullptr) return json_error(404, "NOT_FOUND", "no such connection");
  auto done = ask<bool>(ap->inbox(), [ap, token] {
    return ap->disconnect(token, wire::Code::ClosedByAdmin, "disconnected by an administrator");
  });
  if (!done) return loop_timeout();
  if (!*done) return json_error(404, "NOT_FOUND", "no such connection");
  return ok_json(Json{{"disconnected", std::string(req.path_after("/api/v1/connections/"))}});
}

http::Response Api::close_channel(const http::Request& req) {
  if (auto refusal = refuse_non_admin(stats_.broker(), req)) return *refusal;
  const std::string topic(req.path_after("/api/v1/channels/"));
  const auto owner = owner_of(stats_.broker(), topic);
  tier::LoopInbox* inbox = owner.first;
  broker::Router* router = owner.second;
  auto outcome = ask<broker::Outcome>(*inbox, [router, topic] { return router->close_by_admin(topic); });
  if (!outcome) return loop_timeout();
  if (!outcome->ok()) return refused(*outcome);
  return ok_json(Json{{"closed", topic}});
}

http::Response Api::publish(const http::Request& req) {
  const Caller caller = caller_of(stats_.broker(), req);
  if (caller.refused) return *caller.refused;
  const std::string topic(req.path_after("/api/v1/publish/"));
  if (caller.grants) {
    const wire::Code code = caller.grants->publish(topic);
    if (code != wire::Code::Ok) return refused({code, "the user may not publish this topic"});
  }
  if (const std::string type = media_type_of(req.header("content-type")); is_form(type)) return form_refused(type);
  auto payload = payload_of(req);
  if (!payload) return json_error(400, "BAD_PAYLOAD", payload.error().message);
  const wire::PayloadKind kind = payload->first;
  const bool image = req.param("image").value_or("") == "true";
  const auto owner = owner_of(stats_.broker(), topic);
  tier::LoopInbox* inbox = owner.first;
  broker::Router* router = owner.second;
  auto job = [router, topic, image, kind = payload->first, bytes = std::move(payload->second)] {
    cache::ChannelId id = 0;
    broker::Outcome outcome = router->advertise(topic, kind, id);
    if (!outcome.ok()) return std::pair{outcome, uint64_t{0}};
    outcome = router->publish(id, bytes, image);
    const cache::Channel* ch = router->channel(id);
    return std::pair{outcome, ch ? ch->seq : 0};
  };
  auto result = ask<std::pair<broker::Outcome, uint64_t>>(*inbox, job);
  if (!result) return loop_timeout();
  if (result->first.code == wire::Code::KindMismatch) return kind_refused(topic, kind);
  if (!result->first.ok()) return refused(result->first);
  return ok_json(Json{{"topic", topic}, {"seq", result->second}});
}

http::Response Api::snapshot(const http::Request& req) {
  const Caller caller = caller_of(stats_.broker(), req);
  if (caller.refused) return *caller.refused;
  const std::string topic(req.path_after("/api/v1/snapshot/"));
  // As the native SNAPSHOT: the user must be entitled to the real-time stream.
  if (caller.grants && !caller.grants->receives(topic, 0)) {
    return refused({wire::Code::NotAuthorized, "the user may not receive this topic in real time"});
  }
  const auto owner = owner_of(stats_.broker(), topic);
  tier::LoopInbox* inbox = owner.first;
  broker::Router* router = owner.second;
  auto job = [router, topic] {
    Collector collector;
    const broker::Outcome outcome = router->snapshot(&collector, topic, 1);
    return std::pair{outcome, std::move(collector.image)};
  };
  auto result = ask<std::pair<broker::Outcome, ImageCopy>>(*inbox, job);
  if (!result) return loop_timeout();
  if (!result->first.ok()) return refused(result->first);
  const ImageCopy& image = result->second;
  if (!image.found) return json_error(404, "NOT_FOUND", "no such topic in the cache");
  // The same JSON as `tickwire snapshot --json` (and MQTT subscribers): one renderer.
  fields::MessageView msg;
  msg.kind = fields::MessageView::Kind::Image;
  msg.topic = image.topic;
  msg.channel = image.channel_id;
  msg.seq = image.seq;
  msg.payload_kind = image.kind;
  msg.payload = image.payload;
  return http::Response::json(fields::message_json(msg, fields::broker_dictionary()) + "\n");
}

}  // namespace tw::admin
