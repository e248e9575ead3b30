// JsonEncoder: what the delivery policy sends a /stream subscriber, as
// WebSocket text messages (RFC 6455 frames, server to client: unmasked,
// FIN set, one frame per message, written here whole: the
// websocket::Transport passes them through, Framing::TextMessages), each
// one JSON object in the shape of
// `tickwire sub --json` (src/channel_json): image, update and status. A
// stream message is encoded once for every /stream subscriber (its own
// StreamFrames slot); images and status notices per subscriber.
#pragma once
#include <span>
#include <string_view>

#include "session/encoder.h"

namespace tw::stream {

class JsonEncoder final : public session::Encoder {
 public:
  // Native is slot 0, MQTT 3.1.1 and 5 slots 1 and 2 (broker/stream_frames.h).
  static constexpr uint8_t kSlot = 3;
  static const JsonEncoder& instance();

  size_t stream_frame_max(const cache::Channel& channel, std::span<const uint8_t> payload, bool image) const override;
  size_t encode_stream(std::span<uint8_t> out, const cache::Channel& channel, std::span<const uint8_t> payload,
                       bool image) const override;
  // request_id: /stream has no snapshot requests, every image starts or refreshes a stream.
  size_t image_max(const cache::Channel& channel, bool introduce) const override;
  size_t encode_image(std::span<uint8_t> out, const cache::Channel& channel, uint32_t request_id,
                      bool introduce) const override;
  // The topic is in every message: nothing to introduce.
  size_t status_max(const cache::Channel& channel, std::string_view text, bool introduce) const override;
  size_t encode_status(std::span<uint8_t> out, const cache::Channel& channel, wire::ChannelState state,
                       wire::Code code, std::string_view text, bool introduce) const override;

 private:
  JsonEncoder() : Encoder(kSlot) {}
};

// One text message as a frame (websocket::encode_header, then the text): its
// largest size, and the frame (0 if `out` is too small).
size_t text_message_max(size_t text_size);
size_t encode_text_message(std::span<uint8_t> out, std::span<const uint8_t> text);
inline size_t encode_text_message(std::span<uint8_t> out, std::string_view text) {
  return encode_text_message(out, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

}  // namespace tw::stream
