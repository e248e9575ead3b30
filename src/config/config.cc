// The key table: every configurable key, its range, and how it is checked.
// Both the TOML reader and command-line overrides set keys through here, so a
// bound is written once.
#include "config/config.h"

#include <array>
#include <cctype>
#include <limits>

#include "base/affinity.h"
#include "config/key_table.h"
#include "topic/topic.h"

namespace tw::config {
namespace {

constexpr int64_t kU32Max = std::numeric_limits<uint32_t>::max();
constexpr int64_t kHourMs = 3'600'000;
constexpr int64_t kDayMs = 24 * kHourMs;
constexpr size_t kMaxServerName = 255;  // sent in WELCOME as str16; keep it short
constexpr int64_t kMaxLoopThreads = 64;  // gateways, and access points, each

struct IntegerKey {
  std::string_view name;
  int64_t min;
  int64_t max;
  bool zero_is_off;  // 0 is also allowed, below min: the feature is off
  void (*set)(BrokerConfig&, int64_t);
  int64_t (*get)(const BrokerConfig&);

  bool allows(int64_t value) const { return (value >= min && value <= max) || (zero_is_off && value == 0); }
};

// The key name is the member path itself, which is also its TOML name.
#define TW_KEY_WITH_ZERO(member, min, max, zero_is_off)                                    \
  IntegerKey {                                                                              \
    #member, min, max, zero_is_off,                                                         \
        [](BrokerConfig& c, int64_t v) { c.member = static_cast<decltype(c.member)>(v); }, \
        [](const BrokerConfig& c) { return static_cast<int64_t>(c.member); }                \
  }
#define TW_INTEGER_KEY(member, min, max) TW_KEY_WITH_ZERO(member, min, max, false)
#define TW_INTEGER_KEY_OR_OFF(member, min, max) TW_KEY_WITH_ZERO(member, min, max, true)

// Minimums: a timer under 10 ms would spin the loop; a frame under 64 bytes
// cannot hold a WELCOME; zero of any count would refuse every client.
const std::array kIntegerKeys = {
    TW_INTEGER_KEY(heartbeat_ms, 10, kHourMs),
    TW_INTEGER_KEY(idle_timeout_ms, 10, kDayMs),
    TW_INTEGER_KEY(hello_timeout_ms, 10, kHourMs),
    TW_INTEGER_KEY(frame_deadline_ms, 10, kHourMs),
    TW_INTEGER_KEY(handshake_timeout_ms, 10, kHourMs),
    TW_INTEGER_KEY(shutdown_grace_ms, 0, 60'000),
    TW_INTEGER_KEY(http_request_timeout_ms, 10, kHourMs),
    TW_INTEGER_KEY(http_idle_timeout_ms, 10, kDayMs),
    TW_INTEGER_KEY(request_timeout_ms, 10, kHourMs),
    TW_INTEGER_KEY(release_linger_ms, 0, kDayMs),
    TW_INTEGER_KEY(not_found_ttl_ms, 0, kDayMs),
    TW_INTEGER_KEY(channel_linger_ms, 0, kDayMs),
    TW_INTEGER_KEY(gateways, 0, kMaxLoopThreads),
    TW_INTEGER_KEY(access_points, 0, kMaxLoopThreads),
    TW_INTEGER_KEY(delay_max_bytes, int64_t{1} << 20, int64_t{1} << 40),
    TW_INTEGER_KEY(delay_bucket_ms, 10, 60'000),
    TW_INTEGER_KEY(auth_failure_delay_ms, 0, 60'000),
    TW_INTEGER_KEY(usage_interval_ms, 100, kDayMs),
    TW_INTEGER_KEY_OR_OFF(sys_interval_ms, 100, kDayMs),
    TW_INTEGER_KEY_OR_OFF(mqtt_max_keepalive_s, 1, 65'535),
    TW_INTEGER_KEY(auth_verifier_threads, 1, kMaxLoopThreads),
    TW_INTEGER_KEY(auth_max_pending_per_source, 1, 1'024),
    TW_INTEGER_KEY_OR_OFF(loop_slice_us, kMinSliceUs, kMaxSliceUs),
    TW_INTEGER_KEY(limits.max_frame, 64, int64_t{1} << 30),
    TW_INTEGER_KEY(limits.max_subscriptions, 1, kU32Max),
    TW_INTEGER_KEY(limits.max_registrations, 1, 0x7FFF'FFFF),  // ids with the top bit are stream ids
    TW_INTEGER_KEY(limits.max_connections, 1, kU32Max),
    TW_INTEGER_KEY(limits.max_channels, 1, kU32Max),
    TW_INTEGER_KEY(limits.max_channels_per_connection, 1, kU32Max),
    TW_INTEGER_KEY(limits.max_channels_per_user, 0, kU32Max),
    TW_INTEGER_KEY(limits.max_output_buffer, 1024, int64_t{1} << 40),
    TW_INTEGER_KEY(limits.max_partial_input, int64_t{1} << 20, int64_t{1} << 40),
    TW_INTEGER_KEY(limits.max_http_connections, 1, kU32Max),
    TW_INTEGER_KEY(limits.max_http_header_bytes, 256, int64_t{1} << 20),
    TW_INTEGER_KEY(limits.max_http_body, 0, int64_t{1} << 30),
    TW_INTEGER_KEY(limits.max_websocket_message, 64, int64_t{1} << 30),
    TW_INTEGER_KEY(limits.max_topic_length, 1, 65'535),
    TW_INTEGER_KEY(limits.max_topic_depth, 1, 1024),
    TW_INTEGER_KEY(store.segment_bytes, int64_t{1} << 16, int64_t{1} << 40),
    TW_INTEGER_KEY(store.publish_window, 1, 1'000'000),
    TW_INTEGER_KEY(store.max_consumer_window, 1, 1'000'000),
    TW_INTEGER_KEY(ha.ttl_s, 2, 60),  // etcd grants no lease under 2 s with its default election timeout
};
#undef TW_INTEGER_KEY_OR_OFF
#undef TW_INTEGER_KEY
#undef TW_KEY_WITH_ZERO

constexpr std::array<std::string_view, 14> kStringKeys = {
    "listen", "mqtt_listen", "http_listen", "server_name", "log_level", "provider_balance", "slow_consumer_policy", "cpus", "auth_file",
    "usage_log", "fields_file", "store.dir", "ha.key", "ha.advertise"};

bool valid_slow_consumer_policy(std::string_view value) {
  return value == "conflate" || value == "drop" || value == "disconnect";
}

const IntegerKey* find_integer_key(std::string_view name) {
  for (const IntegerKey& key : kIntegerKeys) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

Error out_of_range(const IntegerKey& key, int64_t value) {
  const std::string range = "between " + std::to_string(key.min) + " and " + std::to_string(key.max);
  return Error{(key.zero_is_off ? "must be 0 (off) or " : "must be ") + range + ", got " + std::to_string(value)};
}

Status check_listen(std::string_view value) {
  std::string host;
  uint16_t port = 0;
  if (!split_host_port(value, host, port)) {
    return Error{"expected HOST:PORT or [IPV6]:PORT with port 0..65535, got '" +
                 std::string(value) + "'"};
  }
  return Ok{};
}

Status check_server_name(std::string_view value) {
  if (value.empty() || value.size() > kMaxServerName) {
    return Error{"must be 1.." + std::to_string(kMaxServerName) + " bytes long"};
  }
  return Ok{};
}

// "" is no pinning; anything else must parse as a cpu list.
Status check_cpus(std::string_view value) {
  if (value.empty()) return Ok{};
  auto cpus = parse_cpu_list(value);
  if (!cpus) return cpus.error();
  return Ok{};
}

// Single-threaded is 0 and 0; a gateway without an access point (or the
// reverse) would leave clients with nothing to serve them.
Status check_thread_counts(const BrokerConfig& config) {
  if ((config.gateways == 0) == (config.access_points == 0)) return Ok{};
  return Error{"keys 'gateways' and 'access_points': both 0 (single-threaded) or both at least "
               "1, got gateways = " + std::to_string(config.gateways) +
               ", access_points = " + std::to_string(config.access_points)};
}

std::string counted(size_t count, std::string_view noun) {
  return std::to_string(count) + " " + std::string(noun) + (count == 1 ? "" : "s");
}

// Each loop thread takes the next cpu of the list, so it needs one per thread.
Status check_enough_cpus(const BrokerConfig& config) {
  if (config.cpus.empty()) return Ok{};
  auto cpus = parse_cpu_list(config.cpus);
  if (!cpus) return Ok{};  // reported by check_cpus
  size_t needed = loop_thread_count(config);
  if (cpus->size() >= needed) return Ok{};
  std::string threads = counted(needed, "thread");
  if (!single_threaded(config)) {
    threads += " (" + counted(config.gateways, "gateway") + " + " +
               counted(config.access_points, "access point") + ")";
  }
  return Error{"key 'cpus': '" + config.cpus + "' lists " + counted(cpus->size(), "cpu") +
               " for " + threads};
}

bool all_digits(std::string_view text) {
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

bool valid_host(std::string_view host) {
  if (host.empty()) return false;
  for (char c : host) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == '[' || c == ']') return false;
  }
  return true;
}

}  // namespace

namespace detail {

KeyKind key_kind(std::string_view key) {
  if (find_integer_key(key) != nullptr) return KeyKind::Integer;
  for (std::string_view name : kStringKeys) {
    if (name == key) return KeyKind::String;
  }
  if (key == "allow_anonymous") return KeyKind::Boolean;
  return KeyKind::Unknown;
}

}  // namespace detail

bool split_host_port(std::string_view text, std::string& host, uint16_t& port) {
  std::string_view host_part;
  std::string_view port_part;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return false;
    }
    host_part = text.substr(1, close - 1);
    port_part = text.substr(close + 2);
  } else {
    size_t colon = text.find(':');
    if (colon == std::string_view::npos || text.find(':', colon + 1) != std::string_view::npos) {
      return false;  // a bare IPv6 address needs brackets
    }
    host_part = text.substr(0, colon);
    port_part = text.substr(colon + 1);
  }
  if (!valid_host(host_part)) return false;
  if (port_part.empty() || port_part.size() > 5 || !all_digits(port_part)) return false;
  uint32_t value = 0;
  for (char c : port_part) value = value * 10 + static_cast<uint32_t>(c - '0');
  if (value > 65'535) return false;
  host.assign(host_part);
  port = static_cast<uint16_t>(value);
  return true;
}

Status set_integer(BrokerConfig& config, std::string_view key, int64_t value) {
  const IntegerKey* spec = find_integer_key(key);
  if (spec == nullptr) return Error{"not an integer key"};
  if (!spec->allows(value)) return out_of_range(*spec, value);
  spec->set(config, value);
  return Ok{};
}

std::vector<Listener> effective_listeners(const BrokerConfig& config) {
  if (!config.listeners.empty()) return config.listeners;
  Listener plain;
  plain.address = config.listen;
  std::vector<Listener> listeners = {plain};
  // Embedded defaults are optional: a taken port is logged and skipped.
  auto add_default = [&](const char* protocol, const std::string& address, bool set) {
    if (address.empty()) return;
    Listener l;
    l.protocol = protocol;
    l.address = address;
    l.optional = !set;
    listeners.push_back(std::move(l));
  };
  add_default("mqtt", config.mqtt_listen, config.mqtt_listen_set);
  add_default("http", config.http_listen, config.http_listen_set);
  return listeners;
}

std::string value_text(const BrokerConfig& config, std::string_view key) {
  if (const IntegerKey* integer = find_integer_key(key)) return std::to_string(integer->get(config));
  if (key == "listen") return config.listen;
  if (key == "mqtt_listen") return config.mqtt_listen;
  if (key == "http_listen") return config.http_listen;
  if (key == "server_name") return config.server_name;
  if (key == "log_level") {
    constexpr std::array<const char*, 5> kLevelNames = {"debug", "info", "warn", "error", "off"};
    return kLevelNames[static_cast<size_t>(config.log_level)];
  }
  if (key == "provider_balance") return config.provider_balance;
  if (key == "slow_consumer_policy") return config.slow_consumer_policy;
  if (key == "cpus") return config.cpus;
  if (key == "auth_file") return config.auth_file;
  if (key == "usage_log") return config.usage_log;
  if (key == "fields_file") return config.fields_file;
  if (key == "store.dir") return config.store.dir;
  if (key == "ha.key") return config.ha.key;
  if (key == "ha.advertise") return config.ha.advertise;
  return "";
}

Status set_string(BrokerConfig& config, std::string_view key, std::string_view value) {
  if (key == "listen") {
    if (auto status = check_listen(value); !status) return status;
    config.listen.assign(value);
    if (!config.listeners.empty()) config.listeners.front().address.assign(value);
  } else if (key == "mqtt_listen") {
    if (!value.empty()) {
      if (auto status = check_listen(value); !status) return status;
    }
    config.mqtt_listen.assign(value);
    config.mqtt_listen_set = true;
  } else if (key == "http_listen") {
    if (!value.empty()) {
      if (auto status = check_listen(value); !status) return status;
    }
    config.http_listen.assign(value);
    config.http_listen_set = true;
  } else if (key == "server_name") {
    if (auto status = check_server_name(value); !status) return status;
    config.server_name.assign(value);
  } else if (key == "log_level") {
    if (!log::parse_level(value, config.log_level)) {
      return Error{"expected one of debug, info, warn, error, off, got '" + std::string(value) +
                   "'"};
    }
  } else if (key == "provider_balance") {
    if (value != "least-loaded" && value != "round-robin") {
      return Error{"expected least-loaded or round-robin, got '" + std::string(value) + "'"};
    }
    config.provider_balance.assign(value);
  } else if (key == "slow_consumer_policy") {
    if (!valid_slow_consumer_policy(value)) {
      return Error{"expected conflate, drop or disconnect, got '" + std::string(value) + "'"};
    }
    config.slow_consumer_policy.assign(value);
  } else if (key == "cpus") {
    if (auto status = check_cpus(value); !status) return status;
    config.cpus.assign(value);
  } else if (key == "auth_file") {
    config.auth_file.assign(value);
  } else if (key == "usage_log") {
    config.usage_log.assign(value);
  } else if (key == "fields_file") {
    config.fields_file.assign(value);
  } else if (key == "store.dir") {
    config.store.dir.assign(value);
  } else if (key == "ha.key") {
    if (value.empty()) return Error{"must not be empty"};
    config.ha.key.assign(value);
  } else if (key == "ha.advertise") {
    if (!value.empty()) {
      if (auto status = check_listen(value); !status) return status;
    }
    config.ha.advertise.assign(value);
  } else {
    return Error{"not a string key"};
  }
  return Ok{};
}

Status set_boolean(BrokerConfig& config, std::string_view key, bool value) {
  if (key != "allow_anonymous") return Error{"not a boolean key"};
  config.allow_anonymous = value;
  return Ok{};
}

// "*", or SCHEME://HOST[:PORT] with scheme http or https and nothing after: as a browser sends Origin.
Status check_origin(std::string_view origin) {
  if (origin == "*") return Ok{};
  const size_t scheme_end = origin.find("://");
  const std::string_view scheme = origin.substr(0, scheme_end);
  const std::string_view rest = scheme_end == std::string_view::npos ? std::string_view{} : origin.substr(scheme_end + 3);
  const bool ok_scheme = scheme == "http" || scheme == "https";
  if (!ok_scheme || rest.empty() || rest.find_first_of("/?# ") != std::string_view::npos) {
    return Error{"expected \"*\" or an origin like \"https://console.example.com\" (scheme, host, optional port), got '" +
                 std::string(origin) + "'"};
  }
  return Ok{};
}

bool valid_queue_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || name == "." || name == "..") return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// A queue's name is its directory: nothing that leaves store.dir, and no two alike.
Status check_queue(const BrokerConfig& config, size_t index) {
  const QueueConfig& q = config.queues[index];
  if (!valid_queue_name(q.name)) {
    return Error{"name '" + q.name + "': expected 1..128 letters, digits, '-', '_' or '.'"};
  }
  for (size_t i = 0; i < index; ++i) {
    if (config.queues[i].name == q.name) return Error{"name '" + q.name + "' is used twice"};
  }
  if (q.subscriptions.empty()) return Error{"'" + q.name + "' has no subscriptions"};
  if (q.max_messages == 0 || q.max_bytes == 0) return Error{"'" + q.name + "': max_messages and max_bytes must be > 0"};
  if (config.store.dir.empty()) return Error{"'" + q.name + "' needs store.dir (guaranteed messaging is off without it)"};
  return Ok{};
}

// A link needs a unique name and at least one well-formed upstream address.
Status check_link(const BrokerConfig& config, size_t index) {
  const LinkConfig& link = config.links[index];
  if (!valid_queue_name(link.name)) {
    return Error{"name '" + link.name + "': expected 1..128 letters, digits, '-', '_' or '.'"};
  }
  for (size_t i = 0; i < index; ++i) {
    if (config.links[i].name == link.name) return Error{"name '" + link.name + "' is used twice"};
  }
  if (link.upstreams.empty()) return Error{"'" + link.name + "' has no upstreams"};
  for (const std::string& address : link.upstreams) {
    std::string host;
    uint16_t port = 0;
    if (!split_host_port(address, host, port) || port == 0) {
      return Error{"'" + link.name + "': upstream '" + address + "' is not HOST:PORT"};
    }
  }
  if (link.reconnect_min_ms == 0 || link.reconnect_max_ms < link.reconnect_min_ms) {
    return Error{"'" + link.name + "': expected 0 < reconnect_min_ms <= reconnect_max_ms"};
  }
  return Ok{};
}

Status validate(const BrokerConfig& config) {
  auto named = [](std::string_view key, const Error& error) {
    return Error{"key '" + std::string(key) + "': " + error.message};
  };
  for (const IntegerKey& key : kIntegerKeys) {
    int64_t value = key.get(config);
    if (!key.allows(value)) return named(key.name, out_of_range(key, value));
  }
  if (auto status = check_listen(config.listen); !status) return named("listen", status.error());
  if (!config.mqtt_listen.empty()) {
    if (auto status = check_listen(config.mqtt_listen); !status) return named("mqtt_listen", status.error());
  }
  if (!config.http_listen.empty()) {
    if (auto status = check_listen(config.http_listen); !status) return named("http_listen", status.error());
  }
  if (auto status = check_server_name(config.server_name); !status) {
    return named("server_name", status.error());
  }
  if (!valid_slow_consumer_policy(config.slow_consumer_policy)) {
    return named("slow_consumer_policy", Error{"expected conflate, drop or disconnect, got '" +
                                               config.slow_consumer_policy + "'"});
  }
  if (config.log_level < log::Level::Debug || config.log_level > log::Level::Off) {
    return named("log_level", Error{"not a known level"});
  }
  if (auto status = check_cpus(config.cpus); !status) return named("cpus", status.error());
  for (const std::string& origin : config.http_allowed_origins) {
    if (auto status = check_origin(origin); !status) return named("http_allowed_origins", status.error());
  }
  for (size_t i = 0; i < config.listeners.size(); ++i) {
    if (auto status = check_listener(config.listeners[i]); !status) {
      return Error{"listener " + std::to_string(i + 1) + ": " + status.error().message};
    }
  }
  for (const DelayHistory& history : config.delay_history) {
    for (const std::string& pattern : history.topics) {
      const topic::Limits limits{config.limits.max_topic_length, config.limits.max_topic_depth};
      if (topic::validate_pattern(pattern, limits) != topic::Error::Ok) {
        return named("delay_history.topics", Error{"not a valid topic pattern: '" + pattern + "'"});
      }
    }
  }
  for (size_t i = 0; i < config.queues.size(); ++i) {
    if (auto status = check_queue(config, i); !status) {
      return Error{"queue " + std::to_string(i + 1) + ": " + status.error().message};
    }
  }
  for (const std::string& url : config.ha.etcd) {
    if (url.rfind("http://", 0) != 0 || url.size() == 7) {
      return named("ha.etcd", Error{"expected etcd client URLs like \"http://127.0.0.1:2379\", got '" + url + "'"});
    }
  }
  for (size_t i = 0; i < config.links.size(); ++i) {
    if (auto status = check_link(config, i); !status) {
      return Error{"link " + std::to_string(i + 1) + ": " + status.error().message};
    }
  }
  if (auto status = check_thread_counts(config); !status) return status;
  return check_enough_cpus(config);
}

}  // namespace tw::config
