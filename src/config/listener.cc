#include "config/listener.h"

#include <algorithm>

#include "config/config.h"

namespace tw::config {
namespace {

bool known_protocol(std::string_view protocol) {
  return std::find(kListenerProtocols.begin(), kListenerProtocols.end(), protocol) != kListenerProtocols.end();
}

std::string protocol_list() {
  std::string list;
  for (std::string_view name : kListenerProtocols) list += (list.empty() ? "" : ", ") + std::string(name);
  return list;
}

}  // namespace

std::string Listener::describe(uint16_t bound_port) const {
  std::string host;
  uint16_t port = 0;
  if (!split_host_port(address, host, port)) host = address;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return protocol + (tls() ? " tls://" : " tcp://") + host + ":" + std::to_string(bound_port);
}

bool is_listener_key(std::string_view key) {
  return key == "protocol" || key == "address" || key == "cert" || key == "key" || key == "client_ca";
}

Status set_listener_key(Listener& listener, std::string_view key, std::string_view value) {
  if (key == "protocol") {
    if (!known_protocol(value)) return Error{"expected one of " + protocol_list() + ", got '" + std::string(value) + "'"};
    listener.protocol.assign(value);
  } else if (key == "address") {
    std::string host;
    uint16_t port = 0;
    if (!split_host_port(value, host, port)) {
      return Error{"expected HOST:PORT or [IPV6]:PORT with port 0..65535, got '" + std::string(value) + "'"};
    }
    listener.address.assign(value);
  } else if (key == "cert") {
    listener.cert.assign(value);
  } else if (key == "key") {
    listener.key.assign(value);
  } else if (key == "client_ca") {
    listener.client_ca.assign(value);
  } else {
    return Error{"unknown key"};
  }
  return Ok{};
}

Status check_listener(const Listener& listener) {
  if (!known_protocol(listener.protocol)) {
    return Error{"protocol: expected one of " + protocol_list() + ", got '" + listener.protocol + "'"};
  }
  std::string host;
  uint16_t port = 0;
  if (listener.address.empty()) return Error{"address is required (HOST:PORT)"};
  if (!split_host_port(listener.address, host, port)) return Error{"address: not HOST:PORT: '" + listener.address + "'"};
  if (listener.cert.empty() != listener.key.empty()) return Error{"cert and key: TLS needs both"};
  if (!listener.client_ca.empty() && !listener.tls()) return Error{"client_ca: needs cert and key (TLS)"};
  return Ok{};
}

}  // namespace tw::config
