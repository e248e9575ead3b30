// Who may do what on the admin listener (docs/operations.md, "Access"):
// /healthz, /readyz and /metrics are open; statistics need a user once
// authentication is on (or anonymous access, allow_anonymous); connections and admin actions need an admin user;
// REST publish and snapshot apply the user's entitlements (src/auth) exactly
// as the native protocol does.
#pragma once
#include <memory>
#include <optional>

#include "auth/entitlements.h"
#include "http/route.h"
#include "tier/broker.h"

namespace tw::admin {

// An error response when the request may not read statistics (nullopt: it may).
std::optional<http::Response> refuse_reader(const tier::Broker& broker, const http::Request& req);
// An error response unless the request comes from an admin.
std::optional<http::Response> refuse_non_admin(const tier::Broker& broker, const http::Request& req);

// The caller's entitlements for REST publish and snapshot.
struct Caller {
  std::shared_ptr<const auth::Grants> grants;  // null with authentication off: everything allowed
  std::optional<http::Response> refused;       // set when the caller may do nothing at all
};
Caller caller_of(const tier::Broker& broker, const http::Request& req);

http::Response unauthorized();
// 503: a loop did not answer within admin::kLoopAnswerTimeout (busy or stopping).
http::Response loop_timeout();
http::Response json_error(int status, std::string_view code, std::string_view message);

}  // namespace tw::admin
