#include "stream/json_encoder.h"

#include <cstring>

#include "channel_json/channel_json.h"

namespace tw::stream {
namespace {

// RFC 6455 5.2: FIN + opcode 1 (text); the length in 7 bits, or 126 + 16
// bits, or 127 + 64 bits, big-endian; server frames are not masked.
size_t header_size(size_t n) { return n < 126 ? 2 : n <= 0xFFFF ? 4 : 10; }

}  // namespace

size_t text_message_max(size_t text_size) { return header_size(text_size) + text_size; }

size_t encode_text_message(std::span<uint8_t> out, std::span<const uint8_t> text) {
  const size_t n = text.size();
  const size_t head = header_size(n);
  if (out.size() < head + n) return 0;
  out[0] = 0x81;
  if (head == 2) {
    out[1] = static_cast<uint8_t>(n);
  } else if (head == 4) {
    out[1] = 126;
    out[2] = static_cast<uint8_t>(n >> 8);
    out[3] = static_cast<uint8_t>(n);
  } else {
    out[1] = 127;
    for (int i = 0; i < 8; ++i) out[2 + i] = static_cast<uint8_t>(uint64_t{n} >> (56 - 8 * i));
  }
  if (n != 0) std::memcpy(out.data() + head, text.data(), n);
  return head + n;
}

const JsonEncoder& JsonEncoder::instance() {
  static const JsonEncoder encoder;
  return encoder;
}

size_t JsonEncoder::stream_frame_max(const cache::Channel& channel, std::span<const uint8_t> payload,
                                     bool image) const {
  return text_message_max(channel_json::of_message(channel, payload, image).size());
}

size_t JsonEncoder::encode_stream(std::span<uint8_t> out, const cache::Channel& channel,
                                  std::span<const uint8_t> payload, bool image) const {
  return channel_json::forget(encode_text_message(out, channel_json::of_message(channel, payload, image)));
}

size_t JsonEncoder::image_max(const cache::Channel& channel, bool) const {
  return text_message_max(channel_json::of_image(channel).size());
}

size_t JsonEncoder::encode_image(std::span<uint8_t> out, const cache::Channel& channel, uint32_t, bool) const {
  return channel_json::forget(encode_text_message(out, channel_json::of_image(channel)));
}

size_t JsonEncoder::status_max(const cache::Channel& channel, std::string_view text, bool) const {
  // The longest state and code names, with the text escaped at worst as \u00XX per byte.
  constexpr size_t kFixed = 160;
  return text_message_max(kFixed + channel.topic.size() * 6 + text.size() * 6);
}

size_t JsonEncoder::encode_status(std::span<uint8_t> out, const cache::Channel& channel, wire::ChannelState state,
                                  wire::Code code, std::string_view text, bool) const {
  return encode_text_message(out, channel_json::of_status(channel, state, code, text));
}

}  // namespace tw::stream
