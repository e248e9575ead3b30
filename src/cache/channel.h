// A channel: the live stream of one topic, with its last-value cache.
// Owned by the thread that owns its ChannelTable.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fields/field_list.h"
#include "wire/protocol.h"

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
  // The last message's MQTT 5 properties, as they travel beside it (the
  // "forwarded" string of mqtt/codec.h; opaque here), kept with the image
  // for the retained message a new MQTT 5 subscriber gets. Empty for every
  // message not published by an MQTT 5 client with properties: apply()
  // forgets them, the publisher's router sets them after it.
  std::vector<uint8_t> properties;
  // MQTT's retained message, where it is not the last value. A message
  // published as transient (an MQTT PUBLISH with RETAIN 0) changes the last
  // value only: the message before it stays the retained one, set aside here.
  // Any other message (RETAIN 1, a native publisher, a provider) is both the
  // last value and the retained message again (docs/mqtt.md, "Retained messages").
  struct SetAside {
    bool active = false;          // the retained message is this one, not the last value
    std::vector<uint8_t> opaque;  // Opaque channels only (MQTT publishes no other); empty: none
    std::vector<uint8_t> properties;
  } retained;

  bool has_data() const { return has_image; }
  // Forgets the cached state (an interactive channel that was released or closed).
  void clear_image();
  // Applies one published payload; false (and no change) if it is malformed.
  // Checked::Already: another thread of this broker validated it (docs/ARCHITECTURE.md,
  // "One message across the tiers").
  bool apply(std::span<const uint8_t> payload, bool replace, fields::Checked checked = fields::Checked::No);
  // The properties of the message just applied (assign reuses capacity: no
  // allocation once the largest was seen).
  void keep_properties(std::span<const uint8_t> forwarded) { properties.assign(forwarded.begin(), forwarded.end()); }
  // Before applying a transient message: what is retained now stays so.
  void set_retained_aside();
  // A message that is also the retained one: the set-aside copy goes.
  void join_retained() { retained.active = false; }
  // The retained message's payload and properties (the last value's unless set aside).
  std::span<const uint8_t> retained_opaque() const { return retained.active ? retained.opaque : opaque; }
  std::span<const uint8_t> retained_properties() const {
    return retained.active ? retained.properties : properties;
  }
  size_t image_size() const;
  // Encodes the current image payload; returns its size, 0 if it does not fit.
  size_t encode_image(std::span<uint8_t> out) const;
};

}  // namespace tw::cache
