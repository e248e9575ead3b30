// Connection options for tw::client::Client, and the "HOST:PORT" parsing shared
// by the CLI and the examples.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tickwire/base/result.h"
#include "tickwire/wire/protocol.h"

namespace tw::client {

inline constexpr std::string_view kDefaultServer = "127.0.0.1:9400";
inline constexpr std::string_view kServerEnvVar = "TICKWIRE_SERVER";
inline constexpr std::string_view kPasswordEnvVar = "TICKWIRE_PASSWORD";

struct Options {
  std::string host = "127.0.0.1";
  uint16_t port = 9400;
  std::string client_name = "tickwire-client";
  uint32_t heartbeat_ms = 5'000;          // asked of the broker; WELCOME says what applies
  uint32_t connect_timeout_ms = 5'000;    // TCP connect + HELLO/WELCOME, per attempt
  bool reconnect = true;                  // reconnect inside poll() after a lost connection
  uint32_t reconnect_min_ms = 100;        // first backoff; doubles per failed attempt
  uint32_t reconnect_max_ms = 5'000;      // backoff ceiling
  uint32_t max_frame = wire::kDefaultMaxFrame;  // largest frame accepted from the broker
  size_t output_buffer = 256u << 10;      // initial output buffer; grows up to max_output_buffer
  size_t max_output_buffer = 64u << 20;   // beyond this publish() reports back pressure
  uint32_t close_linger_ms = 1'000;       // close() waits this long to drain buffered output
  // TLS (docs/security.md): the broker's certificate must chain to `ca` (""
  // = the system's trusted CAs) and name `host`; cert and key, when set,
  // identify this client to a mutual-TLS listener.
  bool tls = false;
  std::string ca;
  std::string cert;
  std::string key;
  // A user of a broker with authentication (docs/security.md): HELLO
  // version 2 carries them. "" = no user (anonymous, or a TLS certificate's).
  std::string user;
  std::string password;
  // The highest protocol version HELLO offers (the broker may choose lower).
  // Version 3 brings the broker's limits in WELCOME (ServerInfo::limits).
  uint16_t protocol_version = wire::kProtocolVersion;
  // Guaranteed publishes unanswered at once; publish_guaranteed() refuses more (the broker's store.publish_window is 256 by default).
  uint32_t guaranteed_window = 256;
  // More servers, "HOST:PORT" each: the other broker of an HA pair, say. A
  // failed attempt (an HA backup's NOT_PRIMARY included) or a lost connection
  // moves to the next server of the list, host:port first; the backoff
  // applies only once a whole round of them has failed.
  std::vector<std::string> failover;
};

// "HOST:PORT" -> host, port. Accepts "[v6addr]:PORT". False when malformed or port 0.
bool parse_server_address(std::string_view text, std::string& host, uint16_t& port);
// "HOST:PORT[,HOST:PORT...]": the first into host and port, the others into failover.
Status parse_server_list(std::string_view text, Options& options);
// The server the CLI should use: `flag` if not empty, else $TICKWIRE_SERVER, else the default.
std::string resolve_server(std::string_view flag);
// The password for a user: the first line of `file` when given, else
// $TICKWIRE_PASSWORD. An error when the file cannot be read or neither is set.
Result<std::string> resolve_password(const std::string& file);

}  // namespace tw::client
