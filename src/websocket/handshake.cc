#include "websocket/handshake.h"

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <strings.h>

namespace tw::websocket {

namespace {

constexpr std::string_view kGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Whether the comma-separated list holds `token` (case-insensitive).
bool lists(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    std::string_view item = trim(list.substr(0, comma));
    if (item.size() == token.size() && strncasecmp(item.data(), token.data(), token.size()) == 0) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

// Sec-WebSocket-Key must be base64 of 16 bytes: 24 characters ending "==".
bool valid_key(std::string_view key) {
  if (key.size() != 24 || key.substr(22) != "==") return false;
  unsigned char decoded[24];
  return EVP_DecodeBlock(decoded, reinterpret_cast<const unsigned char*>(key.data()), 24) == 18;
}

HandshakeAnswer refuse(int status, std::string why) {
  HandshakeAnswer a;
  a.status = status;
  a.error = std::move(why);
  return a;
}

}  // namespace

std::string accept_key(std::string_view key) {
  std::string text(key);
  text += kGuid;
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  char encoded[4 * ((SHA_DIGEST_LENGTH + 2) / 3) + 1];
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(encoded), digest, SHA_DIGEST_LENGTH);
  return std::string(encoded, static_cast<size_t>(n));
}

HandshakeAnswer answer_upgrade(const UpgradeRequest& r, std::string_view wanted) {
  if (r.method != "GET") return refuse(400, "a WebSocket upgrade must be a GET");
  if (!lists(r.upgrade, "websocket")) return refuse(400, "Upgrade: websocket expected");
  if (!lists(r.connection, "upgrade")) return refuse(400, "Connection: Upgrade expected");
  if (trim(r.version) != "13") return refuse(426, "Sec-WebSocket-Version 13 expected");
  const std::string_view key = trim(r.key);
  if (!valid_key(key)) return refuse(400, "Sec-WebSocket-Key must be base64 of 16 bytes");
  HandshakeAnswer a;
  if (!wanted.empty()) {
    if (!lists(r.protocols, wanted)) return refuse(400, "subprotocol '" + std::string(wanted) + "' required");
    a.protocol.assign(wanted);
  }
  a.accept = accept_key(key);
  return a;
}

std::string switching_protocols(const HandshakeAnswer& answer) {
  std::string out =
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ";
  out += answer.accept;
  out += "\r\n";
  if (!answer.protocol.empty()) out += "Sec-WebSocket-Protocol: " + answer.protocol + "\r\n";
  out += "\r\n";
  return out;
}

}  // namespace tw::websocket
