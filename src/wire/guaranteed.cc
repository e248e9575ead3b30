#include "tickwire/wire/guaranteed.h"

#include "tickwire/wire/bytes.h"
#include "wire/frame_writer.h"

namespace tw::wire {

bool decode(const Frame& f, GuaranteedPublish& m) {
  ByteReader r(f.body);
  m.message_id = r.u64();
  m.retransmit = (f.flags & kPublishRetransmit) != 0;
  m.topic = r.str16();
  m.payload = r.rest();
  return (f.flags & ~kPublishRetransmit) == 0 && !r.failed();
}

bool decode(const Frame& f, Bind& m) {
  ByteReader r(f.body);
  m.bind_id = r.u32();
  m.window = r.u32();
  m.queue = r.str16();
  m.topic = (f.flags & kBindDurable) != 0 ? r.str16() : std::string_view{};
  const uint8_t from = f.flags & (kBindFromSeq | kBindFromTime);
  m.replay = from == kBindFromSeq ? ReplayFrom::Seq : from == kBindFromTime ? ReplayFrom::Time : ReplayFrom::None;
  m.from = m.replay != ReplayFrom::None ? r.u64() : 0;
  const bool known = (f.flags & ~(kBindDurable | kBindFromSeq | kBindFromTime)) == 0;
  const bool durable_has_topic = (f.flags & kBindDurable) == 0 || !m.topic.empty();
  return known && from != (kBindFromSeq | kBindFromTime) && durable_has_topic && r.at_end();
}

bool decode(const Frame& f, Unbind& m) {
  ByteReader r(f.body);
  m.bind_id = r.u32();
  m.unsubscribe = (f.flags & kUnbindUnsubscribe) != 0;
  return (f.flags & ~kUnbindUnsubscribe) == 0 && r.at_end();
}

bool decode(const Frame& f, ConsumerAck& m) {
  ByteReader r(f.body);
  m.bind_id = r.u32();
  m.seq = r.u64();
  m.cumulative = (f.flags & kAckCumulative) != 0;
  const uint8_t allowed = f.type == MsgType::ConsumerAck ? kAckCumulative : 0;
  return (f.flags & ~allowed) == 0 && r.at_end();
}

bool decode(const Frame& f, PublishAck& m) {
  ByteReader r(f.body);
  m.message_id = r.u64();
  m.code = static_cast<Code>(r.u16());
  m.text = r.str16();
  return f.flags == 0 && r.at_end();
}

bool decode(const Frame& f, Deliver& m) {
  ByteReader r(f.body);
  m.bind_id = r.u32();
  m.seq = r.u64();
  m.timestamp_ns = r.u64();
  m.redelivered = (f.flags & kRedelivered) != 0;
  m.topic = r.str16();
  m.payload = r.rest();
  return (f.flags & ~kRedelivered) == 0 && !r.failed();
}

size_t encode(std::span<uint8_t> out, const GuaranteedPublish& m) {
  auto w = begin_frame(out, MsgType::GuaranteedPublish, m.retransmit ? kPublishRetransmit : 0);
  w.u64(m.message_id);
  w.str16(m.topic);
  w.bytes(m.payload);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const Bind& m) {
  auto w = begin_frame(out, MsgType::Bind, m.flags());
  w.u32(m.bind_id);
  w.u32(m.window);
  w.str16(m.queue);
  if (!m.topic.empty()) w.str16(m.topic);
  if (m.replay != ReplayFrom::None) w.u64(m.from);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const Unbind& m) {
  auto w = begin_frame(out, MsgType::Unbind, m.unsubscribe ? kUnbindUnsubscribe : 0);
  w.u32(m.bind_id);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, MsgType type, const ConsumerAck& m) {
  auto w = begin_frame(out, type, type == MsgType::ConsumerAck && m.cumulative ? kAckCumulative : 0);
  w.u32(m.bind_id);
  w.u64(m.seq);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const PublishAck& m) {
  auto w = begin_frame(out, MsgType::PublishAck);
  w.u64(m.message_id);
  w.u16(static_cast<uint16_t>(m.code));
  w.str16(m.text);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const Deliver& m) {
  auto w = begin_frame(out, MsgType::Deliver, m.redelivered ? kRedelivered : 0);
  w.u32(m.bind_id);
  w.u64(m.seq);
  w.u64(m.timestamp_ns);
  w.str16(m.topic);
  w.bytes(m.payload);
  return finish_frame(w);
}

}  // namespace tw::wire
