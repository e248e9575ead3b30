// The FIX gateway's configuration (docs/fix.md): sessions, routes, the
// broker for drop copies, the metrics listener. Read from TOML.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tickwire/base/result.h"
#include "fix/engine.h"

namespace tw::fix {

struct GatewaySession {
  SessionSpec spec;
  bool store = false;  // a store (spec.store_kind) under GatewayConfig::store_dir/<name>
  // Client sessions: the exchanges it may route to; nullopt = every exchange.
  std::optional<std::vector<std::string>> exchanges;
  bool is_client() const { return spec.role == Role::Acceptor; }
};

// A routing rule: every condition given must hold; the first rule that
// matches names the exchange session.
struct Route {
  std::string ex_destination;     // tag 100
  std::string symbol;             // tag 55
  std::string security_exchange;  // tag 207
  std::string client;             // the client session's name
  std::string exchange;           // the exchange session's name (required)
};

struct GatewayConfig {
  std::string name = "tickwire-fix";  // the broker client name
  std::string broker;                 // "host:port" of tickwired's native listener; "" = no drop copies
  std::string broker_user;
  std::string broker_password;
  std::string topic_prefix = "FIX";
  std::string metrics;    // "host:port" of the /metrics endpoint; "" = none
  std::string store_dir;  // base folder of the sessions with store = true
  std::vector<GatewaySession> sessions;
  std::vector<Route> routes;

  const GatewaySession* session(std::string_view name) const;
};

// Errors name the source and, where toml++ knows it, the line.
Result<GatewayConfig> parse_gateway_config(std::string_view text, const std::string& source_name);
Result<GatewayConfig> load_gateway_config(const std::string& path);

// A session or exchange name: letters, digits, '_' and '-' (it is a topic level).
bool valid_session_name(std::string_view name);

}  // namespace tw::fix
