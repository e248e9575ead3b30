// MqttEncoder: MQTT PUBLISH packets for the delivery policy. A channel's
// topic is the PUBLISH topic; an opaque channel's payload goes as is, a
// field-list channel's as the JSON line `tickwire sub --json` prints
// (client/message_format.h). Stream messages go with RETAIN 0; a
// subscriber's image of a channel (the last-value cache) with RETAIN 1, as
// MQTT's retained message. Everything goes at QoS 0, so one encoding serves
// every subscriber of a version (StreamFrames): one instance per version,
// each with its own slot. MQTT has no channel status: status notices are
// not encoded (0 bytes).
#pragma once
#include "mqtt/packet.h"
#include "session/encoder.h"

namespace tw::mqtt {

class MqttEncoder final : public session::Encoder {
 public:
  static constexpr uint8_t kSlotV311 = 1;
  static constexpr uint8_t kSlotV5 = 2;
  static const MqttEncoder& instance(Version v);

  size_t stream_frame_max(const cache::Channel& channel, std::span<const uint8_t> payload, bool image) const override;
  size_t encode_stream(std::span<uint8_t> out, const cache::Channel& channel, std::span<const uint8_t> payload,
                       bool image) const override;
  size_t image_max(const cache::Channel& channel, bool introduce) const override;
  size_t encode_image(std::span<uint8_t> out, const cache::Channel& channel, uint32_t request_id,
                      bool introduce) const override;
  size_t status_max(const cache::Channel&, std::string_view, bool) const override { return 0; }
  size_t encode_status(std::span<uint8_t>, const cache::Channel&, wire::ChannelState, wire::Code, std::string_view,
                       bool) const override {
    return 0;
  }

 private:
  explicit MqttEncoder(Version v) : Encoder(v == Version::V5 ? kSlotV5 : kSlotV311), version_(v) {}
  size_t encode(std::span<uint8_t> out, const cache::Channel& channel, std::span<const uint8_t> body,
                bool retain) const;

  Version version_;
};

}  // namespace tw::mqtt
