#include "stream/request.h"

#include <nlohmann/json.hpp>

namespace tw::stream {
namespace {

using Json = nlohmann::json;

Result<std::string> string_member(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return Error{std::string("'") + key + "' must be a string"};
  return it->get<std::string>();
}

// An optional unsigned member no larger than `max`; absent: `fallback`.
Result<uint32_t> number_member(const Json& j, const char* key, uint32_t max, uint32_t fallback) {
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (!it->is_number_unsigned() || it->get<uint64_t>() > max) {
    return Error{std::string("'") + key + "' must be an integer from 0 to " + std::to_string(max)};
  }
  return static_cast<uint32_t>(it->get<uint64_t>());
}

Result<wire::SlowPolicy> policy_member(const Json& j) {
  auto it = j.find("policy");
  if (it == j.end()) return wire::SlowPolicy::Default;
  const std::string name = it->is_string() ? it->get<std::string>() : "";
  if (name == "conflate") return wire::SlowPolicy::Conflate;
  if (name == "drop") return wire::SlowPolicy::Drop;
  if (name == "disconnect") return wire::SlowPolicy::Disconnect;
  return Error{"'policy' must be \"conflate\", \"drop\" or \"disconnect\""};
}

Result<Op> op_member(const Json& j) {
  auto op = string_member(j, "op");
  if (!op) return op.error();
  if (*op == "subscribe") return Op::Subscribe;
  if (*op == "unsubscribe") return Op::Unsubscribe;
  if (*op == "login") return Op::Login;
  return Error{"unknown op '" + *op + "' (subscribe, unsubscribe, login)"};
}

Status parse_subscription(const Json& j, Request& r) {
  auto topic = string_member(j, "topic");
  if (!topic) return topic.error();
  r.topic = std::move(*topic);
  if (r.op == Op::Unsubscribe) return Ok{};
  auto conflate = number_member(j, "conflate_ms", kMaxConflateMs, 0);
  if (!conflate) return conflate.error();
  r.conflate_ms = *conflate;
  auto policy = policy_member(j);
  if (!policy) return policy.error();
  r.policy = *policy;
  return Ok{};
}

Status parse_login(const Json& j, Request& r) {
  auto user = string_member(j, "user");
  if (!user) return user.error();
  auto password = string_member(j, "password");
  if (!password) return password.error();
  r.user = std::move(*user);
  r.password = std::move(*password);
  return Ok{};
}

}  // namespace

const char* op_name(Op op) {
  switch (op) {
    case Op::Login: return "login";
    case Op::Subscribe: return "subscribe";
    case Op::Unsubscribe: return "unsubscribe";
  }
  return "?";
}

Result<Request> parse_request(std::string_view text) {
  // No exceptions: a parse error gives a discarded value (invalid UTF-8 included).
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{"a message must be one JSON object"};
  Request r;
  auto op = op_member(j);
  if (!op) return op.error();
  r.op = *op;
  if (j.contains("id")) {
    auto id = number_member(j, "id", UINT32_MAX, 0);
    if (!id) return id.error();
    r.id = *id;
  }
  const Status body = r.op == Op::Login ? parse_login(j, r) : parse_subscription(j, r);
  if (!body) return body.error();
  return r;
}

}  // namespace tw::stream
