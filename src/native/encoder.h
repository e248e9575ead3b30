// NativeEncoder: the native protocol's frames for the delivery policy
// (docs/protocol.md): UPDATE and IMAGE for stream messages, CHANNEL + IMAGE
// for a subscriber's own image, STATUS for state changes and gap notices.
// Stateless, so one instance serves every native session of the process.
#pragma once
#include "session/encoder.h"

namespace tw::native {

class NativeEncoder final : public session::Encoder {
 public:
  NativeEncoder() : Encoder(kNativeSlot) {}
  // The one instance native sessions and gateways share.
  static const NativeEncoder& instance();

  size_t stream_frame_max(const cache::Channel& channel, std::span<const uint8_t> payload, bool image) const override;
  size_t encode_stream(std::span<uint8_t> out, const cache::Channel& channel, std::span<const uint8_t> payload,
                       bool image) const override;
  size_t image_max(const cache::Channel& channel, bool introduce) const override;
  size_t encode_image(std::span<uint8_t> out, const cache::Channel& channel, uint32_t request_id,
                      bool introduce) const override;
  size_t status_max(const cache::Channel& channel, std::string_view text, bool introduce) const override;
  size_t encode_status(std::span<uint8_t> out, const cache::Channel& channel, wire::ChannelState state,
                       wire::Code code, std::string_view text, bool introduce) const override;
};

}  // namespace tw::native
