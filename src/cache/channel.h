// A channel: the live stream of one topic, with its last-value cache.
// Owned by the thread that owns its ChannelTable.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tickwire/fields/field_list.h"
#include "tickwire/wire/protocol.h"

namespace tw::cache {

using ChannelId = uint32_t;  // 1-based; 0 means "none"

struct Channel {
  ChannelId id = 0;
  std::string topic;
  wire::PayloadKind kind = wire::PayloadKind::FieldList;
  wire::ChannelState state = wire::ChannelState::Ok;
  // Of the last message applied. Never reset, not even when an interactive
  // channel is released and requested again: a recovery image continues the
  // numbering, so only a jump between UPDATEs is a gap.
  uint64_t seq = 0;
  bool has_image = false;          // false until the first message, and after a release
  fields::FieldImage image;        // FieldList channels
  std::vector<uint8_t> opaque;     // Opaque channels: the last message
  // The last message's attribute block: opaque bytes its publisher's
  // protocol attached (MQTT 5: expiry, user properties, content type, as
  // mqtt/codec.h's "forwarded" string), which travel beside the message and
  // are kept with the image for a later subscriber. The broker never reads
  // them. Empty for a message without any: apply() forgets them, the
  // publisher's router sets them after it.
  std::vector<uint8_t> attributes;
  // The retained value, where it is not the last value. A message published
  // as transient (MessageOrigin::transient; MQTT's RETAIN 0) changes the last
  // value only: the message before it stays the retained one, set aside here.
  // Any other message (a native publisher, a provider, MQTT's RETAIN 1) is
  // both the last value and the retained one again (docs/mqtt.md, "Retained messages").
  struct SetAside {
    bool active = false;          // the retained value is this one, not the last value
    std::vector<uint8_t> opaque;  // Opaque channels only (transient messages are opaque); empty: none
    std::vector<uint8_t> attributes;
  } retained;

  bool has_data() const { return has_image; }
  // Forgets the cached state (an interactive channel that was released or closed).
  void clear_image();
  // Applies one published payload; false (and no change) if it is malformed.
  // Checked::Already: another thread of this broker validated it (docs/ARCHITECTURE.md,
  // "One message across the tiers").
  bool apply(std::span<const uint8_t> payload, bool replace, fields::Checked checked = fields::Checked::No);
  // The attributes of the message just applied (assign reuses capacity: no
  // allocation once the largest was seen).
  void keep_attributes(std::span<const uint8_t> block) { attributes.assign(block.begin(), block.end()); }
  // Before applying a transient message: what is retained now stays so.
  void set_retained_aside();
  // A message that is also the retained one: the set-aside copy goes.
  void join_retained() { retained.active = false; }
  // The retained value's payload and attributes (the last value's unless set aside).
  std::span<const uint8_t> retained_opaque() const { return retained.active ? retained.opaque : opaque; }
  std::span<const uint8_t> retained_attributes() const {
    return retained.active ? retained.attributes : attributes;
  }
  size_t image_size() const;
  // Encodes the current image payload; returns its size, 0 if it does not fit.
  size_t encode_image(std::span<uint8_t> out) const;
};

}  // namespace tw::cache
