#include "tier/protocols.h"

#include <algorithm>
#include <cstdlib>

#include "output/stream_frames.h"
#include "mqtt/encoder.h"
#include "mqtt/mqtt_session.h"
#include "native/native_session.h"
#include "stream/json_encoder.h"
#include "stream/stream_session.h"
#include "tickwire/wire/codec.h"

namespace tw::tier {

Status Protocols::add(Protocol protocol) {
  if (find(protocol.name) != nullptr) return Error{"protocol '" + protocol.name + "' is in the table already"};
  for (uint8_t slot : protocol.encoder_slots) {
    if (slot >= output::StreamEncoder::kSlots) {
      return Error{"protocol '" + protocol.name + "': encoder slot " + std::to_string(slot) + " out of range"};
    }
    for (const auto& other : entries_) {
      if (std::find(other->encoder_slots.begin(), other->encoder_slots.end(), slot) != other->encoder_slots.end()) {
        return Error{"protocol '" + protocol.name + "': encoder slot " + std::to_string(slot) + " is " +
                     other->name + "'s"};
      }
    }
  }
  entries_.push_back(std::make_unique<Protocol>(std::move(protocol)));
  return Ok{};
}

const Protocol* Protocols::find(std::string_view name) const {
  for (const auto& p : entries_) {
    if (p->name == name) return p.get();
  }
  return nullptr;
}

std::vector<std::string_view> Protocols::names() const {
  std::vector<std::string_view> out;
  for (const auto& p : entries_) out.push_back(p->name);
  return out;
}

namespace {

Protocol native_protocol() {
  Protocol p;
  p.name = "native";
  p.encoder_slots = {output::StreamEncoder::kNativeSlot};
  p.open = [](session::Session::Env env, std::unique_ptr<session::Transport> transport, std::string peer,
              const std::string&, uint64_t now_ns) -> std::unique_ptr<session::Session> {
    return std::make_unique<native::NativeSession>(env, std::move(transport), std::move(peer), now_ns);
  };
  p.refuse = [](wire::Code code, std::string_view text) {
    std::vector<uint8_t> bytes(64 + text.size());
    bytes.resize(wire::encode(bytes, wire::ErrorMsg{code, std::string(text)}));
    return bytes;
  };
  p.refusal = p.refuse(wire::Code::TooManyConnections, "connection limit reached");
  return p;
}

// The broker's MQTT state (client identifiers, stored sessions, shared
// groups) lives as long as the table: the factory holds it.
Protocol mqtt_protocol() {
  Protocol p;
  p.name = "mqtt";
  p.encoder_slots = {mqtt::MqttEncoder::kSlotV311, mqtt::MqttEncoder::kSlotV5};
  auto state = std::make_shared<mqtt::ServerState>();
  p.open = [state](session::Session::Env env, std::unique_ptr<session::Transport> transport, std::string peer,
                   const std::string&, uint64_t now_ns) -> std::unique_ptr<session::Session> {
    return std::make_unique<mqtt::MqttSession>(env, *state, std::move(transport), std::move(peer), now_ns);
  };
  // Wills whose Will Delay Interval ends after their connection: published by whichever loop sees them due first.
  p.tick = [state](const session::Session::Env& env, uint64_t now_ns) {
    mqtt::publish_due_wills(state->wills, env, now_ns);
  };
  // An MQTT client has sent no CONNECT yet when it is refused, so no reply
  // can be in its version: just closed (for max_connections and NOT_PRIMARY alike).
  p.websocket = Protocol::WebSocket{"/mqtt", "mqtt", websocket::Framing::BinaryStream};
  return p;
}

Protocol stream_protocol() {
  Protocol p;
  p.name = "stream";
  p.encoder_slots = {stream::JsonEncoder::kSlot};
  p.open = stream::session_factory();
  p.listens = false;
  p.websocket = Protocol::WebSocket{"/stream", "", websocket::Framing::TextMessages};
  return p;
}

}  // namespace

Protocols builtin_protocols() {
  Protocols table;
  const bool added = table.add(native_protocol()) && table.add(mqtt_protocol()) && table.add(stream_protocol());
  if (!added) std::abort();  // distinct names and slots: cannot fail
  return table;
}

}  // namespace tw::tier
