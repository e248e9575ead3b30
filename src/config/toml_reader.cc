// Reads a broker config from TOML with toml++ (header-only, exceptions off so
// parse errors come back as values). Walks the document key by key so every
// error names the file, line and key it came from.
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "config/config.h"
#include "config/key_table.h"

namespace tw::config {
namespace {

class Reader {
 public:
  explicit Reader(const std::string& source_name) : source_(source_name) {}

  Status apply_table(BrokerConfig& config, const toml::table& table, const std::string& prefix) {
    for (auto&& [key, node] : table) {
      std::string name(key.str());
      if (!prefix.empty()) name = prefix + "." + name;
      if (auto status = apply_node(config, name, key, node); !status) return status;
    }
    return Ok{};
  }

 private:
  Status apply_node(BrokerConfig& config, const std::string& name, const toml::key& key,
                    const toml::node& node) {
    if (name == "limits" || name == "store" || name == "ha") {
      if (!node.is_table()) return key_error(node, name, "expected a table");
      return apply_table(config, *node.as_table(), name);
    }
    if (name == "listener") return apply_listeners(config, node);
    if (name == "queue") return apply_queues(config, node);
    if (name == "link") return apply_links(config, node);
    if (name == "http_allowed_origins") return apply_origins(config, node);
    if (name == "ha.etcd") return strings(node, name, config.ha.etcd);
    if (name == "delay_history") return apply_delay_history(config, node);
    if (name == "listen") {
      listen_line_ = node.source().begin.line;
      if (!config.listeners.empty()) return listen_with_listeners();
    }
    switch (detail::key_kind(name)) {
      case detail::KeyKind::Integer:
        if (!node.is_integer()) return key_error(node, name, "expected an integer");
        return located(node, name, set_integer(config, name, node.as_integer()->get()));
      case detail::KeyKind::String:
        if (!node.is_string()) return key_error(node, name, "expected a string");
        return located(node, name, set_string(config, name, node.as_string()->get()));
      case detail::KeyKind::Boolean:
        if (!node.is_boolean()) return key_error(node, name, "expected true or false");
        return located(node, name, set_boolean(config, name, node.as_boolean()->get()));
      case detail::KeyKind::Unknown:
        break;
    }
    return Error{where(key.source()) + ": unknown key '" + name + "'"};
  }

  // [[listener]] tables, in order; each is checked whole where it starts.
  Status apply_listeners(BrokerConfig& config, const toml::node& node) {
    if (!node.is_array_of_tables()) return key_error(node, "listener", "expected [[listener]] tables");
    for (const toml::node& entry : *node.as_array()) {
      Listener listener;
      for (auto&& [key, value] : *entry.as_table()) {
        const std::string name = "listener." + std::string(key.str());
        if (!is_listener_key(key.str())) return Error{where(key.source()) + ": unknown key '" + name + "'"};
        if (!value.is_string()) return key_error(value, name, "expected a string");
        if (auto status = located(value, name, set_listener_key(listener, key.str(), value.as_string()->get()));
            !status) {
          return status;
        }
      }
      config.listeners.push_back(std::move(listener));
      if (auto status = check_listener(config.listeners.back()); !status) {
        return Error{where(entry.source()) + ": listener " + std::to_string(config.listeners.size()) + ": " +
                     status.error().message};
      }
    }
    if (listen_line_ != 0) return listen_with_listeners();
    return Ok{};
  }

  // [[queue]] tables (docs/guaranteed.md): name, subscriptions, limits; checked whole by validate().
  Status apply_queues(BrokerConfig& config, const toml::node& node) {
    if (!node.is_array_of_tables()) return key_error(node, "queue", "expected [[queue]] tables");
    for (const toml::node& entry : *node.as_array()) {
      QueueConfig queue;
      for (auto&& [key, value] : *entry.as_table()) {
        if (auto status = apply_queue_key(queue, key, value); !status) return status;
      }
      config.queues.push_back(std::move(queue));
    }
    return Ok{};
  }

  Status apply_queue_key(QueueConfig& queue, const toml::key& key, const toml::node& value) {
    const std::string name = "queue." + std::string(key.str());
    if (key.str() == "name") {
      if (!value.is_string()) return key_error(value, name, "expected a string");
      queue.name = value.as_string()->get();
    } else if (key.str() == "subscriptions") {
      if (!value.is_array()) return key_error(value, name, "expected an array of topic patterns");
      for (const toml::node& pattern : *value.as_array()) {
        if (!pattern.is_string()) return key_error(pattern, name, "expected an array of topic patterns");
        queue.subscriptions.push_back(pattern.as_string()->get());
      }
    } else if (key.str() == "max_messages" || key.str() == "max_bytes") {
      if (!value.is_integer() || value.as_integer()->get() <= 0) return key_error(value, name, "expected an integer > 0");
      (key.str() == "max_messages" ? queue.max_messages : queue.max_bytes) =
          static_cast<uint64_t>(value.as_integer()->get());
    } else if (key.str() == "exclusive") {
      if (!value.is_boolean()) return key_error(value, name, "expected true or false");
      queue.exclusive = value.as_boolean()->get();
    } else if (key.str() == "retain_bytes" || key.str() == "retain_age_s") {
      if (!value.is_integer() || value.as_integer()->get() < 0) return key_error(value, name, "expected an integer >= 0");
      (key.str() == "retain_bytes" ? queue.retain_bytes : queue.retain_age_s) =
          static_cast<uint64_t>(value.as_integer()->get());
    } else {
      return Error{where(key.source()) + ": unknown key '" + name + "'"};
    }
    return Ok{};
  }

  // [[link]] tables (docs/configuration.md, "Broker links"); checked whole by validate().
  Status apply_links(BrokerConfig& config, const toml::node& node) {
    if (!node.is_array_of_tables()) return key_error(node, "link", "expected [[link]] tables");
    for (const toml::node& entry : *node.as_array()) {
      LinkConfig link;
      for (auto&& [key, value] : *entry.as_table()) {
        if (auto status = apply_link_key(link, key, value); !status) return status;
      }
      config.links.push_back(std::move(link));
    }
    return Ok{};
  }

  Status apply_link_key(LinkConfig& link, const toml::key& key, const toml::node& value) {
    const std::string name = "link." + std::string(key.str());
    std::string* text = link_text_key(link, key.str());
    uint32_t* number = key.str() == "reconnect_min_ms"   ? &link.reconnect_min_ms
                       : key.str() == "reconnect_max_ms" ? &link.reconnect_max_ms
                       : key.str() == "linger_ms"        ? &link.linger_ms
                                                         : nullptr;
    if (text) {
      if (!value.is_string()) return key_error(value, name, "expected a string");
      *text = value.as_string()->get();
    } else if (number) {
      if (!value.is_integer() || value.as_integer()->get() < 0 || value.as_integer()->get() > 3'600'000) {
        return key_error(value, name, "expected an integer 0..3600000");
      }
      *number = static_cast<uint32_t>(value.as_integer()->get());
    } else if (key.str() == "upstreams") {
      if (!value.is_array()) return key_error(value, name, "expected an array of HOST:PORT strings");
      for (const toml::node& address : *value.as_array()) {
        if (!address.is_string()) return key_error(address, name, "expected an array of HOST:PORT strings");
        link.upstreams.push_back(address.as_string()->get());
      }
    } else if (key.str() == "publish_upstream") {
      if (!value.is_array()) return key_error(value, name, "expected an array of patterns");
      for (const toml::node& pattern : *value.as_array()) {
        if (!pattern.is_string()) return key_error(pattern, name, "expected an array of patterns");
        link.publish_upstream.push_back(pattern.as_string()->get());
      }
    } else if (key.str() == "tls") {
      if (!value.is_boolean()) return key_error(value, name, "expected true or false");
      link.tls = value.as_boolean()->get();
    } else {
      return Error{where(key.source()) + ": unknown key '" + name + "'"};
    }
    return Ok{};
  }

  static std::string* link_text_key(LinkConfig& link, std::string_view key) {
    if (key == "name") return &link.name;
    if (key == "user") return &link.user;
    if (key == "password_file") return &link.password_file;
    if (key == "ca") return &link.ca;
    if (key == "cert") return &link.cert;
    if (key == "key") return &link.key;
    if (key == "local_user") return &link.local_user;
    if (key == "local_password_file") return &link.local_password_file;
    return nullptr;
  }

  // http_allowed_origins = ["https://console.example.com"]: strings, checked by validate().
  Status apply_origins(BrokerConfig& config, const toml::node& node) {
    return strings(node, "http_allowed_origins", config.http_allowed_origins);
  }

  // [[delay_history]] tables: topics = [patterns], delay_s = 1..604800; patterns checked by validate().
  Status apply_delay_history(BrokerConfig& config, const toml::node& node) {
    if (!node.is_array_of_tables()) return key_error(node, "delay_history", "expected [[delay_history]] tables");
    for (const toml::node& entry : *node.as_array()) {
      DelayHistory history;
      for (auto&& [key, value] : *entry.as_table()) {
        const std::string name = "delay_history." + std::string(key.str());
        if (key.str() == "topics") {
          if (auto status = strings(value, name, history.topics); !status) return status;
        } else if (key.str() == "delay_s") {
          if (!value.is_integer() || value.as_integer()->get() < 1 || value.as_integer()->get() > kWeekSeconds) {
            return key_error(value, name, "expected an integer, 1..604800 (a week)");
          }
          history.delay_ms = static_cast<uint32_t>(value.as_integer()->get() * 1000);
        } else {
          return Error{where(key.source()) + ": unknown key '" + name + "'"};
        }
      }
      if (history.topics.empty() || history.delay_ms == 0) {
        return key_error(entry, "delay_history", "each table needs topics and delay_s");
      }
      config.delay_history.push_back(std::move(history));
    }
    return Ok{};
  }

  Status strings(const toml::node& node, const std::string& name, std::vector<std::string>& out) const {
    if (!node.is_array()) return key_error(node, name, "expected an array of strings");
    out.clear();
    for (const toml::node& entry : *node.as_array()) {
      if (!entry.is_string()) return key_error(entry, name, "expected an array of strings");
      out.push_back(entry.as_string()->get());
    }
    return Ok{};
  }

  Error listen_with_listeners() const {
    return Error{source_ + ":" + std::to_string(listen_line_) +
                 ": key 'listen': not with [[listener]] (give each listener its address)"};
  }

  std::string where(const toml::source_region& region) const {
    return source_ + ":" + std::to_string(region.begin.line);
  }

  Error key_error(const toml::node& node, const std::string& name, std::string_view reason) const {
    return Error{where(node.source()) + ": key '" + name + "': " + std::string(reason)};
  }

  Status located(const toml::node& node, const std::string& name, Status status) const {
    if (status) return status;
    return key_error(node, name, status.error().message);
  }

  static constexpr int64_t kWeekSeconds = 604'800;  // as a delayed-only rule's delay_s (docs/security.md)
  const std::string& source_;
  uint32_t listen_line_ = 0;  // where `listen` was set, 0 if not
};

}  // namespace

Result<BrokerConfig> parse_toml(std::string_view text, const std::string& source_name) {
  toml::parse_result parsed = toml::parse(text, source_name);
  if (!parsed) {
    const toml::parse_error& error = parsed.error();
    const toml::source_position& at = error.source().begin;
    return Error{source_name + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) +
                 ": " + std::string(error.description())};
  }
  BrokerConfig config;
  Reader reader(source_name);
  if (auto status = reader.apply_table(config, parsed.table(), ""); !status) return status.error();
  // Keys that constrain each other (gateways with access_points, cpus with
  // the thread count) can only be checked once the whole file is read.
  if (auto status = validate(config); !status) {
    return Error{source_name + ": " + status.error().message};
  }
  return config;
}

Result<BrokerConfig> load_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Error{"cannot read " + path + ": " + std::strerror(errno)};
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) return Error{"cannot read " + path + ": " + std::strerror(errno)};
  return parse_toml(text.str(), path);
}

}  // namespace tw::config
