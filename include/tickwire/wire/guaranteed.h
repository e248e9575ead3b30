// Guaranteed messaging frames, protocol version 4, and BIND's and UNBIND's flags of version 5 (docs/protocol.md,
// "Guaranteed messaging"; docs/guaranteed.md). Little-endian, after the
// 8-byte header of protocol.h; str16 as there.
//
// client -> broker
//   GUARANTEED_PUBLISH 0x0D  u64 message_id, str16 topic, payload (rest)
//                            flags bit 0: retransmit (sent before, unanswered: its deliveries are flagged redelivered)
//   BIND               0x0E  u32 bind_id, u32 window, str16 queue, [str16 topic], [u64 from]
//                            answered by ACK (request_id = bind_id); flags (version 5):
//                            bit 0: a durable topic subscription named `queue`, of `topic`
//                            bit 1: replay from the seq `from`;  bit 2: replay from the time `from` (ns)
//   UNBIND             0x0F  u32 bind_id                                answered by ACK (request_id = bind_id)
//                            flags bit 0 (version 5): unsubscribe: the durable subscription is deleted
//   CONSUMER_ACK       0x10  u32 bind_id, u64 seq     flags bit 0: cumulative (every seq <= this one)
//   NACK               0x11  u32 bind_id, u64 seq     deliver it again (to any consumer, flagged redelivered)
// broker -> client
//   PUBLISH_ACK        0x8B  u64 message_id, u16 code, str16 text       code OK: durable in every matching queue
//   DELIVER            0x8C  u32 bind_id, u64 seq, u64 timestamp_ns, str16 topic, payload (rest)
//                            flags bit 0: redelivered (it may have been delivered before)
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

#include "tickwire/wire/codec.h"

namespace tw::wire {

inline constexpr uint8_t kPublishRetransmit = 0x01;  // GUARANTEED_PUBLISH flags
inline constexpr uint8_t kAckCumulative = 0x01;  // CONSUMER_ACK flags
inline constexpr uint8_t kRedelivered = 0x01;    // DELIVER flags
inline constexpr uint8_t kBindDurable = 0x01;    // BIND flags, version 5
inline constexpr uint8_t kBindFromSeq = 0x02;
inline constexpr uint8_t kBindFromTime = 0x04;
inline constexpr uint8_t kUnbindUnsubscribe = 0x01;  // UNBIND flags, version 5

struct GuaranteedPublish {
  uint64_t message_id = 0;  // chosen by the publisher, echoed in its PUBLISH_ACK
  bool retransmit = false;  // the broker may hold it already (an answer lost with a connection)
  std::string_view topic;
  std::span<const uint8_t> payload;
};
enum class ReplayFrom : uint8_t { None, Seq, Time };
struct Bind {
  uint32_t bind_id = 0;  // chosen by the consumer, not 0; names the binding in DELIVER and acks
  uint32_t window = 0;   // messages delivered and unacknowledged at most (capped by the broker)
  std::string_view queue;
  std::string_view topic;  // not empty: a durable topic subscription named `queue`
  ReplayFrom replay = ReplayFrom::None;
  uint64_t from = 0;       // a seq, or a time in ns since the epoch
  uint8_t flags() const {
    return (topic.empty() ? 0 : kBindDurable) | (replay == ReplayFrom::Seq ? kBindFromSeq : 0) |
           (replay == ReplayFrom::Time ? kBindFromTime : 0);
  }
};
struct Unbind {
  uint32_t bind_id = 0;
  bool unsubscribe = false;  // delete the durable subscription too
};
struct ConsumerAck {  // CONSUMER_ACK and NACK
  uint32_t bind_id = 0;
  uint64_t seq = 0;
  bool cumulative = false;  // CONSUMER_ACK only
};
struct PublishAck {
  uint64_t message_id = 0;
  Code code = Code::Ok;
  std::string_view text;
};
struct Deliver {
  uint32_t bind_id = 0;
  uint64_t seq = 0;  // the queue's sequence number: acknowledge this
  uint64_t timestamp_ns = 0;  // when the broker stored it
  bool redelivered = false;
  std::string_view topic;
  std::span<const uint8_t> payload;
};

inline constexpr size_t kGuaranteedPublishFixedSize = kHeaderSize + 8 + 2;  // + topic + payload
inline constexpr size_t kDeliverFixedSize = kHeaderSize + 4 + 8 + 8 + 2;    // + topic + payload
inline constexpr size_t kPublishAckMaxSize = kHeaderSize + 8 + 2 + 2 + 0xFFFF;
inline size_t publish_ack_size(const PublishAck& m) { return kHeaderSize + 8 + 2 + 2 + m.text.size(); }
inline size_t bind_size(const Bind& m) {
  return kHeaderSize + 4 + 4 + 2 + m.queue.size() + (m.topic.empty() ? 0 : 2 + m.topic.size()) +
         (m.replay == ReplayFrom::None ? 0 : 8);
}

bool decode(const Frame& f, GuaranteedPublish& out);
bool decode(const Frame& f, Bind& out);
bool decode(const Frame& f, Unbind& out);
bool decode(const Frame& f, ConsumerAck& out);  // CONSUMER_ACK (flags: cumulative) and NACK (flags 0)
bool decode(const Frame& f, PublishAck& out);
bool decode(const Frame& f, Deliver& out);

size_t encode(std::span<uint8_t> out, const GuaranteedPublish& m);
size_t encode(std::span<uint8_t> out, const Bind& m);
size_t encode(std::span<uint8_t> out, const Unbind& m);
size_t encode(std::span<uint8_t> out, MsgType type, const ConsumerAck& m);  // ConsumerAck or Nack
size_t encode(std::span<uint8_t> out, const PublishAck& m);
size_t encode(std::span<uint8_t> out, const Deliver& m);

}  // namespace tw::wire
