// OutboundWindow: the QoS 1 and 2 PUBLISHes one MQTT client has been sent
// and has not yet acknowledged (4.3.2, 4.3.3, 4.4). At most the client's
// Receive Maximum of them (capped at kMaxInflight) [MQTT-3.3.4-9], and at
// most `byte_limit` bytes: past either the window is full, and the session
// applies the subscription's slow-consumer policy to what would follow
// (docs/mqtt.md, "QoS 1 and 2 to subscribers"): a slow client never holds
// a publisher back.
//
// Each message is copied once into its slot (the shared QoS 0 encoding with
// this client's packet id), because it must outlive the turn's arena until
// its acknowledgement, and across a reconnect. A slot keeps its buffer's
// capacity, so a window in steady use allocates nothing per message. Packet
// ids are slot numbers (1..kMaxInflight): an acknowledgement finds its slot
// without a search.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "mqtt/client_registry.h"
#include "mqtt/codec.h"
#include "mqtt/packet.h"

namespace tw::mqtt {

class OutboundWindow {
 public:
  static constexpr uint16_t kMaxInflight = 256;

  // The client's Receive Maximum (65535 when it states none) and a byte bound.
  void set_limits(uint16_t receive_maximum, uint64_t byte_limit);
  bool full() const { return count_ >= limit_ || bytes_ >= byte_limit_; }
  size_t in_flight() const { return count_; }
  uint32_t limit() const { return limit_; }
  // Stores the QoS 0 PUBLISH `qos0` rewritten as `r` says (QoS 1 or 2) with
  // a free packet id, which it sets in `r`; the bytes to send, valid until
  // the slot is acknowledged. Empty when full. `expires_ns`: its Message
  // Expiry deadline (0: none).
  std::span<const uint8_t> add(std::span<const uint8_t> qos0, Version v, PublishRewrite& r, uint64_t expires_ns = 0);

  enum class Ack {
    Done,         // the message is complete, its slot free
    SendPubrel,   // PUBREC accepted: answer PUBREL (packet id kept until PUBCOMP)
    Unknown,      // no message in flight with this id
    Mismatch,     // the wrong acknowledgement for the message's QoS or state: a protocol error
  };
  Ack acknowledge(PacketType type, uint16_t packet_id, Reason reason);

  // Everything in flight, in the order first sent (for the stored session); empties the window.
  std::vector<OutboundMessage> take();
  // A resumed session's messages, back in their slots; returns them, in
  // order, to be resent (valid until acknowledged). A PUBLISH whose Message
  // Expiry Interval has passed at now_ns is dropped [MQTT-3.3.2-5]; the
  // others carry what is left of it [MQTT-3.3.2-6]. (A PUBREL is resent
  // whatever the expiry: its message was delivered.)
  std::vector<const OutboundMessage*> restore(std::vector<OutboundMessage> messages, uint64_t now_ns);

 private:
  struct Slot {
    bool used = false;
    uint64_t order = 0;  // when first sent: redelivery keeps the order (4.6)
    OutboundMessage message;
  };
  Slot* free_slot();
  void release(Slot& slot);

  std::vector<Slot> slots_;  // index = packet id - 1; allocated on first use
  size_t cursor_ = 0;        // where the search for a free slot starts: ids rotate
  size_t count_ = 0;
  size_t limit_ = kMaxInflight;
  uint64_t bytes_ = 0;
  uint64_t byte_limit_ = UINT64_MAX;
  uint64_t next_order_ = 0;
};

}  // namespace tw::mqtt
