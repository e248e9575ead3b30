// The server's side of the WebSocket opening handshake (RFC 6455 section
// 4.2): checking the client's upgrade request, choosing the subprotocol, and
// Sec-WebSocket-Accept (base64 of the SHA-1 of the key and the RFC's GUID,
// with OpenSSL).
#pragma once
#include <string>
#include <string_view>

namespace tw::websocket {

// What the listener needs of the client's request (header values as sent).
struct UpgradeRequest {
  std::string_view method;
  std::string_view upgrade;      // Upgrade:, must name websocket
  std::string_view connection;   // Connection:, must list upgrade
  std::string_view version;      // Sec-WebSocket-Version:, must be 13
  std::string_view key;          // Sec-WebSocket-Key:, base64 of 16 bytes
  std::string_view protocols;    // Sec-WebSocket-Protocol:, comma-separated, may be empty
};

struct HandshakeAnswer {
  int status = 101;        // 101, or 400 / 426 with `error`
  std::string error;
  std::string accept;      // Sec-WebSocket-Accept
  std::string protocol;    // the chosen subprotocol, "" for none
};

// `wanted`: the subprotocol this path speaks ("" = any client, none chosen);
// a client that offers protocols but not this one is refused (400), and so
// is one that offers none when `wanted` is set (MQTT over WebSocket requires "mqtt").
HandshakeAnswer answer_upgrade(const UpgradeRequest& request, std::string_view wanted);

// base64(SHA-1(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")).
std::string accept_key(std::string_view key);

// The 101 response's bytes.
std::string switching_protocols(const HandshakeAnswer& answer);

}  // namespace tw::websocket
