#include "native/encoder.h"

#include "tickwire/wire/codec.h"

namespace tw::native {

namespace {
// CHANNEL: header, channel id, kind, str16 topic.
size_t intro_size(const cache::Channel& channel) { return wire::kHeaderSize + 4 + 1 + 2 + channel.topic.size(); }
size_t encode_intro(std::span<uint8_t> out, const cache::Channel& channel) {
  return wire::encode(out, wire::ChannelIntro{channel.id, channel.kind, channel.topic});
}
}  // namespace

const NativeEncoder& NativeEncoder::instance() {
  static const NativeEncoder encoder;
  return encoder;
}

size_t NativeEncoder::stream_frame_max(const cache::Channel&, std::span<const uint8_t> payload, bool) const {
  return wire::kImageFixedSize + payload.size();  // the larger of IMAGE and UPDATE
}

size_t NativeEncoder::encode_stream(std::span<uint8_t> out, const cache::Channel& channel,
                                    std::span<const uint8_t> payload, bool image) const {
  return image ? wire::encode(out, wire::Image{channel.id, channel.seq, 0, payload})
               : wire::encode(out, wire::Update{channel.id, channel.seq, payload});
}

size_t NativeEncoder::image_max(const cache::Channel& channel, bool introduce) const {
  return (introduce ? intro_size(channel) : 0) + wire::kImageFixedSize + channel.image_size();
}

size_t NativeEncoder::encode_image(std::span<uint8_t> out, const cache::Channel& channel, uint32_t request_id,
                                   bool introduce) const {
  if (out.size() < image_max(channel, introduce)) return 0;
  size_t n = introduce ? encode_intro(out, channel) : 0;
  std::span<uint8_t> image = out.subspan(n);
  const size_t payload = channel.encode_image(image.subspan(wire::kImageFixedSize));
  wire::encode_image_prefix(image, channel.id, channel.seq, request_id, payload);
  return n + wire::kImageFixedSize + payload;
}

size_t NativeEncoder::status_max(const cache::Channel& channel, std::string_view text, bool introduce) const {
  // STATUS: header, channel id, state, code, str16 text.
  return (introduce ? intro_size(channel) : 0) + wire::kHeaderSize + 4 + 1 + 2 + 2 + text.size();
}

size_t NativeEncoder::encode_status(std::span<uint8_t> out, const cache::Channel& channel, wire::ChannelState state,
                                    wire::Code code, std::string_view text, bool introduce) const {
  size_t n = introduce ? encode_intro(out, channel) : 0;
  if (introduce && n == 0) return 0;
  const size_t status = wire::encode(out.subspan(n), wire::StatusMsg{channel.id, state, code, text});
  return status == 0 ? 0 : n + status;
}

}  // namespace tw::native
