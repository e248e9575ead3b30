// Listeners: the sockets the broker accepts connections on. The file lists
// them as [[listener]] tables; without any, `listen` (or --listen) is the one
// native plaintext listener, as it always was.
#pragma once
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "tickwire/base/result.h"

namespace tw::config {

// The protocols a listener can speak (docs/mqtt.md for mqtt; http is the
// HTTP listener: admin API, metrics, and WebSocket for MQTT and the browser stream).
inline constexpr std::array<std::string_view, 3> kListenerProtocols = {"native", "mqtt", "http"};

struct Listener {
  std::string protocol = "native";
  std::string address;    // HOST:PORT or [IPV6]:PORT (port 0 = any)
  // TLS (docs/security.md) is on when cert is set; key is then required.
  std::string cert;       // PEM certificate chain
  std::string key;        // PEM private key
  std::string client_ca;  // PEM CA bundle: set = mutual TLS, clients must present a certificate it signed
  // An embedded default MQTT or HTTP listener (mqtt_listen, http_listen not set by the user):
  // when its address cannot be bound the broker logs it and runs without it.
  bool optional = false;

  bool tls() const { return !cert.empty(); }
  // "native tls://127.0.0.1:9443" (with the bound port), for the log.
  std::string describe(uint16_t bound_port) const;
};

// Whether a [[listener]] table may hold this key.
bool is_listener_key(std::string_view key);
// Sets one [[listener]] key ("protocol", "address", "cert", "key", "client_ca");
// the error is the reason alone, as set_string's.
Status set_listener_key(Listener& listener, std::string_view key, std::string_view value);
// A listener's keys taken together: known protocol, an address, cert with key.
Status check_listener(const Listener& listener);

}  // namespace tw::config
