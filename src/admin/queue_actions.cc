// The admin API's queue actions (docs/guaranteed.md, "Queues at runtime"),
// admins only: create and delete a queue, browse its messages, purge it.
// Each runs on the store thread (queue::Spool) between two of its batches;
// the HTTP listener's thread waits for it.
//
//   POST   /api/v1/queues/NAME            {"subscriptions": [...], "max_messages": N, "max_bytes": N, "exclusive": b,
//                                          "retain_bytes": N, "retain_age_s": N}
//   DELETE /api/v1/queues/NAME            a queue created here, with no consumer bound
//   GET    /api/v1/queues/NAME/messages   ?from=SEQ&max=N (100): what it holds, without delivering it
//   POST   /api/v1/queues/NAME/purge      drops every message it holds
#include <charconv>

#include <nlohmann/json.hpp>

#include "admin/access.h"
#include "admin/api.h"
#include "tickwire/fields/payload_text.h"
#include "queue/spool.h"

namespace tw::admin {

namespace {

using Json = nlohmann::ordered_json;

http::Response ok_json(const Json& j) {
  return http::Response::json(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

// The queue's status for the store's refusal: 404 when it does not exist, 409 otherwise.
http::Response refused(const Error& error) {
  const bool missing = error.message.rfind("no queue named", 0) == 0;
  return json_error(missing ? 404 : 409, missing ? "NOT_FOUND" : "CONFLICT", error.message);
}

uint64_t number_param(const http::Request& req, std::string_view name, uint64_t fallback) {
  const auto text = req.param(name);
  uint64_t value = 0;
  if (!text) return fallback;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  return ec == std::errc{} && end == text->data() + text->size() ? value : fallback;
}

Result<config::QueueConfig> queue_from(const std::string& name, const std::string& body) {
  config::QueueConfig q;
  q.name = name;
  const Json j = Json::parse(body.empty() ? "{}" : body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{"the body is not a JSON object"};
  try {
    q.subscriptions = j.value("subscriptions", std::vector<std::string>{});
    q.max_messages = j.value("max_messages", q.max_messages);
    q.max_bytes = j.value("max_bytes", q.max_bytes);
    q.exclusive = j.value("exclusive", q.exclusive);
    q.retain_bytes = j.value("retain_bytes", q.retain_bytes);
    q.retain_age_s = j.value("retain_age_s", q.retain_age_s);
  } catch (const Json::exception& e) {
    return Error{std::string("a field of the wrong type: ") + e.what()};
  }
  return q;
}

// The payload as text when it is printable, else as hex ("payload_hex").
Json browsed_json(const queue::Spool::Browsed& m) {
  const std::span<const uint8_t> payload(reinterpret_cast<const uint8_t*>(m.payload.data()), m.payload.size());
  Json j{{"seq", m.seq}, {"timestamp_ns", m.timestamp_ns}, {"topic", m.topic}, {"bytes", m.payload.size()}};
  if (fields::is_printable(payload)) {
    j["payload"] = m.payload;
  } else {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex;
    for (uint8_t b : payload) hex += {kHex[b >> 4], kHex[b & 15]};
    j["payload_hex"] = hex;
  }
  return j;
}

}  // namespace

http::Response Api::queue_action(const http::Request& req) {
  if (auto refusal = refuse_non_admin(stats_.broker(), req)) return *refusal;
  queue::Spool* spool = stats_.broker().spool();
  if (spool == nullptr) return json_error(409, "NO_STORE", "guaranteed messaging is off: the broker has no store.dir");
  const std::string rest(req.path_after("/api/v1/queues/"));
  const size_t slash = rest.find('/');
  const std::string name = rest.substr(0, slash), what = slash == std::string::npos ? "" : rest.substr(slash + 1);
  if (req.method == "POST" && what.empty()) {
    auto q = queue_from(name, req.body);
    if (!q) return json_error(400, "BAD_REQUEST", q.error().message);
    if (Status created = spool->create_queue(*q); !created) return refused(created.error());
    return ok_json(Json{{"created", name}, {"subscriptions", q->subscriptions}});
  }
  if (req.method == "DELETE" && what.empty()) {
    if (Status deleted = spool->delete_queue(name); !deleted) return refused(deleted.error());
    return ok_json(Json{{"deleted", name}});
  }
  if (req.method == "POST" && what == "purge") {
    auto dropped = spool->purge_queue(name);
    if (!dropped) return refused(dropped.error());
    return ok_json(Json{{"purged", name}, {"messages", *dropped}});
  }
  if (req.method == "GET" && what == "messages") {
    const size_t max = static_cast<size_t>(std::min<uint64_t>(number_param(req, "max", 100), 10'000));
    auto messages = spool->browse_queue(name, number_param(req, "from", 0), max);
    if (!messages) return refused(messages.error());
    Json list = Json::array();
    for (const auto& m : *messages) list.push_back(browsed_json(m));
    return ok_json(Json{{"queue", name}, {"messages", std::move(list)}});
  }
  return json_error(404, "NOT_FOUND", "queue actions: POST or DELETE /api/v1/queues/NAME, "
                                      "GET /api/v1/queues/NAME/messages, POST /api/v1/queues/NAME/purge");
}

}  // namespace tw::admin
