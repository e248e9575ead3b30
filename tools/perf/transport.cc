#include "perf/transport.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "tickwire/client/options.h"

namespace tw::perf {

Result<TransportKind> parse_transport(std::string_view name) {
  if (name == "native") return TransportKind::Native;
  if (name == "mqtt") return TransportKind::Mqtt;
  if (name == "nats") return TransportKind::Nats;
  if (name == "mqtt-raw") return TransportKind::MqttRaw;
  if (name == "nats-raw") return TransportKind::NatsRaw;
  return Error{"unknown transport '" + std::string(name) + "' (expected native, mqtt, nats, mqtt-raw or nats-raw)"};
}

std::vector<std::string> transport_names() {
  std::vector<std::string> names;
  for (auto kind : {TransportKind::Native, TransportKind::Mqtt, TransportKind::Nats, TransportKind::MqttRaw,
                    TransportKind::NatsRaw})
    names.emplace_back(transport_name(kind));
  return names;
}

const char* transport_name(TransportKind kind) {
  switch (kind) {
    case TransportKind::Native: return "native";
    case TransportKind::Mqtt: return "mqtt";
    case TransportKind::Nats: return "nats";
    case TransportKind::MqttRaw: return "mqtt-raw";
    case TransportKind::NatsRaw: return "nats-raw";
  }
  return "?";
}

TransportKind protocol_of(TransportKind kind) {
  switch (kind) {
    case TransportKind::MqttRaw: return TransportKind::Mqtt;
    case TransportKind::NatsRaw: return TransportKind::Nats;
    default: return kind;
  }
}

uint16_t default_port(TransportKind kind) {
  switch (protocol_of(kind)) {
    case TransportKind::Native: return 9400;
    case TransportKind::Mqtt: return 1883;
    case TransportKind::Nats: return 4222;
    default: return 0;
  }
}

Result<ServerAddress> resolve_server(TransportKind kind, std::string_view flag) {
  std::string text(flag);
  if (text.empty()) {
    const char* env = std::getenv(std::string(client::kServerEnvVar).c_str());
    text = env != nullptr && *env != '\0' ? env : "127.0.0.1:" + std::to_string(default_port(kind));
  }
  ServerAddress address;
  if (!client::parse_server_address(text, address.host, address.port))
    return Error{"invalid server address '" + text + "' (expected HOST:PORT)"};
  return address;
}

std::string map_topic(TransportKind kind, std::string_view topic) {
  std::string mapped(topic);
  if (protocol_of(kind) == TransportKind::Nats)
    for (char& c : mapped)
      if (c == '/') c = '.';
  return mapped;
}

std::string map_pattern(TransportKind kind, std::string_view pattern) {
  if (protocol_of(kind) != TransportKind::Mqtt) return map_topic(kind, pattern);
  // Wildcards are whole levels in native syntax; only those are mapped.
  std::string mapped;
  size_t start = 0;
  while (start <= pattern.size()) {
    size_t end = pattern.find('/', start);
    if (end == std::string_view::npos) end = pattern.size();
    std::string_view level = pattern.substr(start, end - start);
    if (!mapped.empty() || start > 0) mapped += '/';
    if (level == "*") mapped += '+';
    else if (level == ">") mapped += '#';
    else mapped += level;
    start = end + 1;
  }
  return mapped;
}

std::string unique_client_id(const std::string& name) {
  static std::atomic<unsigned> counter{0};
  return name + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

Result<std::unique_ptr<Transport>> make_transport(TransportKind kind, const std::string& client_name,
                                                  const TlsOptions& tls, PayloadFormat format) {
  if (tls.on && kind != TransportKind::Native) {
    return Error{std::string("TLS is supported for the native transport only, not ") + transport_name(kind)};
  }
  if (format == PayloadFormat::FieldList && kind != TransportKind::Native) {
    return Error{std::string("field lists (--fields) are the native transport's only, not ") + transport_name(kind)};
  }
  switch (kind) {
    case TransportKind::Native: return make_native_transport(client_name, tls, format);
    case TransportKind::Mqtt: return make_mqtt_transport(client_name);
    case TransportKind::Nats: return make_nats_transport(client_name);
    case TransportKind::MqttRaw: return make_mqtt_raw_transport(client_name);
    case TransportKind::NatsRaw: return make_nats_raw_transport(client_name);
  }
  return Error{"unknown transport"};
}

}  // namespace tw::perf
