#include "admin/access.h"

#include <nlohmann/json.hpp>

#include "auth/authority.h"

namespace tw::admin {

http::Response json_error(int status, std::string_view code, std::string_view message) {
  nlohmann::ordered_json j{{"error", std::string(code)}, {"message", std::string(message)}};
  return http::Response::json(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", status);
}

http::Response loop_timeout() {
  return json_error(503, "LOOP_TIMEOUT", "a loop thread did not answer in time (busy or stopping); try again");
}

http::Response unauthorized() {
  http::Response r = json_error(401, "AUTH_FAILED", "credentials required (HTTP Basic, a user of the users file)");
  r.headers.emplace_back("WWW-Authenticate", "Basic realm=\"tickwire\", charset=\"UTF-8\"");
  return r;
}

std::optional<http::Response> refuse_reader(const tier::Broker& broker, const http::Request& req) {
  const auth::Authority* authority = broker.authority();
  if (authority == nullptr || !req.user.empty() || authority->for_anonymous() != nullptr) return std::nullopt;
  return unauthorized();
}

std::optional<http::Response> refuse_non_admin(const tier::Broker& broker, const http::Request& req) {
  if (auto refused = refuse_reader(broker, req)) return refused;
  if (req.admin) return std::nullopt;
  return json_error(403, "NOT_AUTHORIZED", "an admin user is required");
}

Caller caller_of(const tier::Broker& broker, const http::Request& req) {
  const auth::Authority* authority = broker.authority();
  if (authority == nullptr) return {};
  if (req.user.empty()) {
    auto anonymous = authority->for_anonymous();
    if (!anonymous) return {nullptr, unauthorized()};
    return {std::move(anonymous), std::nullopt};
  }
  const auto policy = authority->policy();
  const auth::User* user = policy->find_user(req.user);
  if (user == nullptr) return {nullptr, unauthorized()};
  return {user->grants, std::nullopt};
}

}  // namespace tw::admin
