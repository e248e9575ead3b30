// Reads the gateway's TOML with toml++ (header-only, exceptions off).
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include <fstream>
#include <set>
#include <sstream>

#include "fix/gateway_config.h"

namespace tw::fix {
namespace {

std::string where(const std::string& source, const toml::node& node) {
  return source + ":" + std::to_string(node.source().begin.line);
}

// Reads the keys of one table into setters, refusing keys nobody asked for
// (a misspelt key would otherwise silently keep its default).
class TableReader {
 public:
  TableReader(const std::string& source, const toml::table& table, std::string what)
      : source_(source), table_(table), what_(std::move(what)) {}

  void text(const char* key, std::string& out) {
    seen_.insert(key);
    if (auto* n = table_.get(key)) {
      if (auto v = n->value<std::string>()) out = *v;
      else fail(*n, key, "expected a string");
    }
  }
  void integer(const char* key, int& out, int64_t lo, int64_t hi) {
    seen_.insert(key);
    if (auto* n = table_.get(key)) {
      auto v = n->value<int64_t>();
      if (!v || *v < lo || *v > hi) fail(*n, key, "expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
      else out = static_cast<int>(*v);
    }
  }
  void boolean(const char* key, bool& out) {
    seen_.insert(key);
    if (auto* n = table_.get(key)) {
      if (auto v = n->value<bool>()) out = *v;
      else fail(*n, key, "expected true or false");
    }
  }
  // `store`: true (= "log"), false, "log" (our LogStore) or "file" (QuickFIX's FileStore).
  void store(const char* key, bool& on, StoreKind& kind) {
    seen_.insert(key);
    auto* n = table_.get(key);
    if (!n) return;
    if (auto v = n->value<bool>()) {
      on = *v;
    } else if (auto t = n->value<std::string>(); t && (*t == "log" || *t == "file")) {
      on = true;
      kind = *t == "log" ? StoreKind::Log : StoreKind::File;
    } else {
      fail(*n, key, "expected true, false, \"log\" or \"file\"");
    }
  }
  void strings(const char* key, std::optional<std::vector<std::string>>& out) {
    seen_.insert(key);
    auto* n = table_.get(key);
    if (!n) return;
    auto* array = n->as_array();
    if (!array) return fail(*n, key, "expected an array of strings");
    out.emplace();
    for (auto& item : *array) {
      if (auto v = item.value<std::string>()) out->push_back(*v);
      else return fail(item, key, "expected an array of strings");
    }
  }
  Status finish() {
    for (auto&& [key, node] : table_)
      if (!seen_.contains(std::string(key.str()))) fail(node, std::string(key.str()), "unknown key");
    if (!error_.empty()) return Error{error_};
    return Ok{};
  }

 private:
  void fail(const toml::node& node, const std::string& key, const std::string& why) {
    if (error_.empty()) error_ = where(source_, node) + ": " + what_ + " key '" + key + "': " + why;
  }
  const std::string& source_;
  const toml::table& table_;
  std::string what_;
  std::set<std::string, std::less<>> seen_;
  std::string error_;
};

Result<GatewaySession> read_session(const std::string& source, const toml::table& t) {
  GatewaySession s;
  TableReader r(source, t, "[[session]]");
  std::string role = "acceptor";
  int port = 0;
  r.text("name", s.spec.name);
  r.text("role", role);
  r.text("begin_string", s.spec.begin_string);
  r.text("sender_comp_id", s.spec.sender_comp_id);
  r.text("target_comp_id", s.spec.target_comp_id);
  r.text("host", s.spec.host);
  r.integer("port", port, 1, 65535);
  r.store("store", s.store, s.spec.store_kind);
  r.boolean("reset_on_logon", s.spec.reset_on_logon);
  r.integer("heartbeat_s", s.spec.heartbeat_s, 1, 3600);
  r.integer("reconnect_s", s.spec.reconnect_s, 1, 3600);
  r.strings("exchanges", s.exchanges);
  if (auto st = r.finish(); !st) return st.error();
  const std::string at = where(source, t) + ": [[session]] '" + s.spec.name + "': ";
  s.spec.port = static_cast<uint16_t>(port);
  if (!valid_session_name(s.spec.name)) return Error{at + "name must be letters, digits, '_' or '-'"};
  if (s.spec.name == "unrouted") return Error{at + "the name 'unrouted' is the drop copies' topic level of refused orders"};
  if (role == "acceptor" || role == "client") s.spec.role = Role::Acceptor;
  else if (role == "initiator" || role == "exchange") s.spec.role = Role::Initiator;
  else return Error{at + "role must be \"client\" (acceptor) or \"exchange\" (initiator)"};
  if (s.spec.begin_string != "FIX.4.2" && s.spec.begin_string != "FIX.4.4")
    return Error{at + "begin_string must be \"FIX.4.2\" or \"FIX.4.4\""};
  if (s.spec.sender_comp_id.empty() || s.spec.target_comp_id.empty())
    return Error{at + "sender_comp_id and target_comp_id are required"};
  if (port == 0) return Error{at + "port is required"};
  if (s.exchanges && !s.is_client()) return Error{at + "exchanges applies to client sessions only"};
  return s;
}

Result<Route> read_route(const std::string& source, const toml::table& t) {
  Route route;
  TableReader r(source, t, "[[route]]");
  r.text("ex_destination", route.ex_destination);
  r.text("symbol", route.symbol);
  r.text("security_exchange", route.security_exchange);
  r.text("client", route.client);
  r.text("exchange", route.exchange);
  if (auto st = r.finish(); !st) return st.error();
  if (route.exchange.empty()) return Error{where(source, t) + ": [[route]]: exchange is required"};
  return route;
}

Status check_references(const GatewayConfig& c, const std::string& source) {
  std::set<std::string> names;
  for (const auto& s : c.sessions)
    if (!names.insert(s.spec.name).second) return Error{source + ": session '" + s.spec.name + "' defined twice"};
  auto is = [&](const std::string& name, bool client) {
    const GatewaySession* s = c.session(name);
    return s != nullptr && s->is_client() == client;
  };
  for (const auto& s : c.sessions) {
    if (s.store && c.store_dir.empty()) return Error{source + ": session '" + s.spec.name + "' has store = true but [gateway] has no store_dir"};
    if (s.exchanges)
      for (const auto& e : *s.exchanges)
        if (!is(e, false)) return Error{source + ": session '" + s.spec.name + "': exchanges names '" + e + "', not an exchange session"};
  }
  for (const auto& r : c.routes) {
    if (!is(r.exchange, false)) return Error{source + ": route to '" + r.exchange + "': no such exchange session"};
    if (!r.client.empty() && !is(r.client, true)) return Error{source + ": route for client '" + r.client + "': no such client session"};
  }
  return Ok{};
}

}  // namespace

bool valid_session_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char ch : name)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-')) return false;
  return true;
}

const GatewaySession* GatewayConfig::session(std::string_view name) const {
  for (const auto& s : sessions)
    if (s.spec.name == name) return &s;
  return nullptr;
}

Result<GatewayConfig> parse_gateway_config(std::string_view text, const std::string& source_name) {
  toml::parse_result parsed = toml::parse(text, source_name);
  if (!parsed) {
    const auto& e = parsed.error();
    return Error{source_name + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description())};
  }
  const toml::table& root = parsed.table();
  GatewayConfig config;
  for (auto&& [key, node] : root) {
    const std::string name(key.str());
    if (name == "gateway" && node.is_table()) {
      TableReader r(source_name, *node.as_table(), "[gateway]");
      r.text("name", config.name);
      r.text("broker", config.broker);
      r.text("broker_user", config.broker_user);
      r.text("broker_password", config.broker_password);
      r.text("topic_prefix", config.topic_prefix);
      r.text("metrics", config.metrics);
      r.text("store_dir", config.store_dir);
      if (auto st = r.finish(); !st) return st.error();
    } else if ((name == "session" || name == "route") && node.is_array_of_tables()) {
      for (auto& item : *node.as_array()) {
        if (name == "session") {
          auto s = read_session(source_name, *item.as_table());
          if (!s) return s.error();
          config.sessions.push_back(std::move(*s));
        } else {
          auto r = read_route(source_name, *item.as_table());
          if (!r) return r.error();
          config.routes.push_back(std::move(*r));
        }
      }
    } else {
      return Error{where(source_name, node) + ": unknown or misshapen key '" + name +
                   "' (expected [gateway], [[session]], [[route]])"};
    }
  }
  if (auto st = check_references(config, source_name); !st) return st.error();
  for (auto& s : config.sessions)
    if (s.store) s.spec.store_dir = config.store_dir + "/" + s.spec.name;
  return config;
}

Result<GatewayConfig> load_gateway_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{path + ": cannot open"};
  std::stringstream text;
  text << in.rdbuf();
  return parse_gateway_config(text.str(), path);
}

}  // namespace tw::fix
