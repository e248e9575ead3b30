// MqttEncoder: MQTT PUBLISH packets for the delivery policy. A channel's
// topic is the PUBLISH topic; an opaque channel's payload goes as is, a
// field-list channel's as the JSON line `tickwire sub --json` prints
// (fields/json.h). Stream messages go with RETAIN 0; a new
// subscriber's image of a channel (the last-value cache) with RETAIN 1, as
// MQTT's retained message (SessionEncoder). Everything goes at QoS 0, so
// one encoding serves every subscriber of a version (StreamFrames): one
// instance per version, each with its own slot. MQTT 5 PUBLISHes carry the
// message's properties, which the channel keeps with its last value
// (cache::Channel::attributes, its attribute block): so the encoder serves live messages and
// images alike, but not a delayed stream's older messages (MQTT has no
// delayed subscriptions). A message whose Message Expiry Interval has
// passed encodes to nothing.
#pragma once
#include "mqtt/packet.h"
#include "session/encoder.h"

namespace tw::mqtt {

class MqttEncoder final : public output::StreamEncoder {
 public:
  static constexpr uint8_t kSlotV311 = 1;
  static constexpr uint8_t kSlotV5 = 2;
  static const MqttEncoder& instance(Version v);

  size_t stream_frame_max(const cache::Channel& channel, std::span<const uint8_t> payload, bool image) const override;
  size_t encode_stream(std::span<uint8_t> out, const cache::Channel& channel, std::span<const uint8_t> payload,
                       bool image) const override;
  // The channel's image as one PUBLISH: `retain`, marked RETAIN 1 and its
  // retained message (cache::Channel::retained) unless `last_value`; else
  // its last value.
  size_t image_max(const cache::Channel& channel, bool retain, bool last_value) const;
  size_t encode_image(std::span<uint8_t> out, const cache::Channel& channel, bool retain, bool last_value) const;

 private:
  explicit MqttEncoder(Version v) : StreamEncoder(v == Version::V5 ? kSlotV5 : kSlotV311), version_(v) {}
  size_t encode(std::span<uint8_t> out, const cache::Channel& channel, std::span<const uint8_t> body,
                bool retain) const;
  size_t encode(std::span<uint8_t> out, const cache::Channel& channel, std::span<const uint8_t> body, bool retain,
                std::span<const uint8_t> forwarded) const;
  size_t frame_max(const cache::Channel& channel, size_t body) const;
  std::span<const uint8_t> properties_of(const cache::Channel& channel) const;
  std::span<const uint8_t> properties_for(std::span<const uint8_t> forwarded) const;

  Version version_;
};

// One MQTT session's encoder for its delivery policy. Stream messages come
// from the version's shared MqttEncoder (same slot, same bytes for every
// subscriber). An image is a retained message only when it predates the
// subscription: `retained` is the session's flag, set while a SUBSCRIBE
// collects the images of the channels it covers; the first message of a
// channel created later, or a refresh after conflation, goes with RETAIN 0.
// A resumed session's subscriptions send the last value instead, still
// with RETAIN 1 (`last_value`, the session's flag while it resumes).
// The flag is also set for a live message that keeps its RETAIN 1 (Retain
// As Published: MqttSession sends it as the channel's image).
class SessionEncoder final : public session::Encoder {
 public:
  SessionEncoder(const MqttEncoder& shared, const bool& retained, const bool& last_value)
      : Encoder(shared.slot()), shared_(shared), retained_(retained), last_value_(last_value) {}

  size_t stream_frame_max(const cache::Channel& channel, std::span<const uint8_t> payload, bool image) const override {
    return shared_.stream_frame_max(channel, payload, image);
  }
  size_t encode_stream(std::span<uint8_t> out, const cache::Channel& channel, std::span<const uint8_t> payload,
                       bool image) const override {
    return shared_.encode_stream(out, channel, payload, image);
  }
  size_t image_max(const cache::Channel& channel, bool) const override {
    return shared_.image_max(channel, retained_, last_value_);
  }
  size_t encode_image(std::span<uint8_t> out, const cache::Channel& channel, uint32_t, bool) const override {
    return shared_.encode_image(out, channel, retained_, last_value_);
  }
  // MQTT has no channel status.
  size_t status_max(const cache::Channel&, std::string_view, bool) const override { return 0; }
  size_t encode_status(std::span<uint8_t>, const cache::Channel&, wire::ChannelState, wire::Code, std::string_view,
                       bool) const override {
    return 0;
  }

 private:
  const MqttEncoder& shared_;
  const bool& retained_;
  const bool& last_value_;  // a resumed session's catch-up (mqtt/session_state.cc)
};

}  // namespace tw::mqtt
