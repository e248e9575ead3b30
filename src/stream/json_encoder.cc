#include "stream/json_encoder.h"

#include <cstring>

#include "channel_json/channel_json.h"
#include "websocket/frame.h"

namespace tw::stream {
size_t text_message_max(size_t text_size) { return websocket::kMaxHeaderBytes + text_size; }

size_t encode_text_message(std::span<uint8_t> out, std::span<const uint8_t> text) {
  if (out.size() < text_message_max(text.size())) return 0;
  const size_t head = websocket::encode_header(out.data(), websocket::Opcode::Text, true, text.size());
  if (!text.empty()) std::memcpy(out.data() + head, text.data(), text.size());
  return head + text.size();
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
