// Protocols: the table of what the broker speaks. A [[listener]] names an
// entry (its protocol), a WebSocket path on the HTTP listeners leads to one,
// and every connection's session is made by its entry's factory; the admin
// API and /metrics label connections with the entry's name. Adding a
// protocol is a folder of its own and one entry here (docs/ARCHITECTURE.md,
// "Adding a protocol"); the accept path, the access points and the admin view
// know no protocol by name.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tickwire/base/result.h"
#include "session/session.h"
#include "websocket/transport.h"

namespace tw::tier {

struct Protocol {
  std::string name;  // what a [[listener]]'s `protocol` says, and the connections' label
  // The StreamFrames slots its stream encoders use (broker/stream_frames.h): one encoding per slot per message.
  std::vector<uint8_t> encoder_slots;
  // A connection's session, on the loop that adopts it. `user`: whom the HTTP
  // listener authenticated a WebSocket upgrade as ("" for a listener's connection).
  session::SessionFactory open;
  // Sent to a connection refused at max_connections before it is closed (empty: closed without a word).
  std::vector<uint8_t> refusal;
  // Its answer to a connection refused before its first byte with another
  // reason (an HA backup's NOT_PRIMARY); null: closed without a word.
  std::vector<uint8_t> (*refuse)(wire::Code code, std::string_view text) = nullptr;
  // Spoken on a [[listener]] of its own (false: only over WebSocket).
  bool listens = true;
  // Served on the HTTP listeners too: an upgrade on `path` that offers
  // `subprotocol` ("" = none required) becomes this protocol's session over `framing`.
  struct WebSocket {
    std::string path;
    std::string subprotocol;
    websocket::Framing framing = websocket::Framing::BinaryStream;
  };
  std::optional<WebSocket> websocket;
  // Work of the protocol's own on a loop's tick, for state its connections
  // leave behind (MQTT: a Will whose delay ends after its connection did);
  // called by every loop that opened one of its sessions. Empty: none.
  std::function<void(const session::Session::Env& env, uint64_t now_ns)> tick;
};

class Protocols {
 public:
  // Refuses a name already in the table, an encoder slot another entry uses, or a slot out of range.
  Status add(Protocol protocol);
  const Protocol* find(std::string_view name) const;
  // The names, in the order they were added: "native, mqtt, stream".
  std::vector<std::string_view> names() const;
  // Entries keep their address for the table's life: sessions and listeners point at them.
  const std::vector<std::unique_ptr<Protocol>>& all() const { return entries_; }

 private:
  std::vector<std::unique_ptr<Protocol>> entries_;
};

// The protocols every broker speaks: native, mqtt (also over WebSocket on
// /mqtt), stream (the browser's JSON, over WebSocket on /stream only).
Protocols builtin_protocols();

}  // namespace tw::tier
