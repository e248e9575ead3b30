#include "mqtt/outbound.h"

#include <algorithm>


namespace tw::mqtt {

void OutboundWindow::set_limits(uint16_t receive_maximum, uint64_t byte_limit) {
  limit_ = std::min<size_t>(receive_maximum, kMaxInflight);
  byte_limit_ = byte_limit;
}

OutboundWindow::Slot* OutboundWindow::free_slot() {
  if (slots_.empty()) slots_.resize(kMaxInflight);
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[(cursor_ + i) % slots_.size()];
    if (slot.used) continue;
    cursor_ = (cursor_ + i + 1) % slots_.size();
    return &slot;
  }
  return nullptr;
}

std::span<const uint8_t> OutboundWindow::add(std::span<const uint8_t> qos0, Version v, PublishRewrite& r,
                                             uint64_t expires_ns) {
  if (full()) return {};
  Slot* slot = free_slot();
  if (slot == nullptr) return {};
  const auto packet_id = static_cast<uint16_t>(slot - slots_.data() + 1);
  std::vector<uint8_t>& packet = slot->message.packet;
  r.packet_id = packet_id;
  packet.resize(rewritten_publish_max(qos0.size(), r));  // keeps the capacity of earlier messages
  packet.resize(rewrite_publish(packet, qos0, v, r));
  if (packet.empty()) return {};
  slot->used = true;
  slot->order = next_order_++;
  slot->message.packet_id = packet_id;
  slot->message.qos = r.qos;
  slot->message.released = false;
  slot->message.expires_ns = expires_ns;
  slot->message.expiry_at = expires_ns != 0 ? message_expiry_at(packet, v) : 0;
  ++count_;
  bytes_ += packet.size();
  return packet;
}

void OutboundWindow::release(Slot& slot) {
  slot.used = false;
  --count_;
  bytes_ -= slot.message.packet.size();
}

OutboundWindow::Ack OutboundWindow::acknowledge(PacketType type, uint16_t packet_id, Reason reason) {
  if (packet_id == 0 || packet_id > slots_.size() || !slots_[packet_id - 1].used) return Ack::Unknown;
  Slot& slot = slots_[packet_id - 1];
  OutboundMessage& m = slot.message;
  const bool expected = (type == PacketType::Puback && m.qos == 1) ||
                        (type == PacketType::Pubrec && m.qos == 2 && !m.released) ||
                        (type == PacketType::Pubcomp && m.qos == 2 && m.released);
  if (!expected) return Ack::Mismatch;
  // A PUBREC with a failure reason ends the exchange (4.3.3): no PUBREL.
  if (type == PacketType::Pubrec && static_cast<uint8_t>(reason) < 0x80) {
    m.released = true;
    return Ack::SendPubrel;
  }
  release(slot);
  return Ack::Done;
}

std::vector<OutboundMessage> OutboundWindow::take() {
  std::vector<Slot*> used;
  for (Slot& slot : slots_) {
    if (slot.used) used.push_back(&slot);
  }
  std::sort(used.begin(), used.end(), [](const Slot* a, const Slot* b) { return a->order < b->order; });
  std::vector<OutboundMessage> out;
  for (Slot* slot : used) {
    out.push_back(std::move(slot->message));
    release(*slot);
    slot->message.packet.clear();
  }
  return out;
}

namespace {
// False when the message expired while the session waited; otherwise its
// expiry, if any, is rewritten to what is left.
bool still_due(OutboundMessage& m, uint64_t now_ns) {
  if (m.expires_ns == 0 || m.released) return true;
  const uint32_t left = expiry_left_s(m.expires_ns, now_ns);
  if (left == 0) return false;
  if (m.expiry_at != 0 && m.expiry_at + 4 <= m.packet.size()) {  // MQTT 5: the interval it carries
    uint8_t* value = m.packet.data() + m.expiry_at;
    value[0] = static_cast<uint8_t>(left >> 24), value[1] = static_cast<uint8_t>(left >> 16);
    value[2] = static_cast<uint8_t>(left >> 8), value[3] = static_cast<uint8_t>(left);
  }
  return true;
}
}  // namespace

std::vector<const OutboundMessage*> OutboundWindow::restore(std::vector<OutboundMessage> messages, uint64_t now_ns) {
  if (slots_.empty()) slots_.resize(kMaxInflight);
  std::vector<const OutboundMessage*> restored;
  for (OutboundMessage& m : messages) {
    if (m.packet_id == 0 || m.packet_id > slots_.size() || slots_[m.packet_id - 1].used) continue;
    if (!still_due(m, now_ns)) continue;
    Slot& slot = slots_[m.packet_id - 1];
    if (!m.released) mark_dup(m.packet);  // 3.3.1.1: a redelivered PUBLISH says so
    slot.used = true;
    slot.order = next_order_++;
    slot.message = std::move(m);
    ++count_;
    bytes_ += slot.message.packet.size();
    restored.push_back(&slot.message);
  }
  return restored;
}

}  // namespace tw::mqtt
