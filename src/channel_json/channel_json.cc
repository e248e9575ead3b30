#include "channel_json/channel_json.h"

#include <vector>

#include "fields/json.h"

namespace tw::channel_json {
namespace {

struct Memo {
  bool valid = false;
  const cache::Channel* channel = nullptr;
  uint64_t seq = 0;
  bool image = false;
  bool cached_image = false;
  const uint8_t* payload = nullptr;
  size_t payload_size = 0;
  std::string json;
};

Memo& memo() {
  thread_local Memo m;
  return m;
}

std::span<const uint8_t> as_bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::span<const uint8_t> render(const cache::Channel& channel, std::span<const uint8_t> payload, bool image,
                                bool cached_image) {
  Memo& m = memo();
  thread_local std::vector<uint8_t> image_bytes;
  if (m.valid && m.channel == &channel && m.seq == channel.seq && m.image == image &&
      m.cached_image == cached_image && m.payload == payload.data() && m.payload_size == payload.size()) {
    return as_bytes(m.json);
  }
  m = {true, &channel, channel.seq, image, cached_image, payload.data(), payload.size(), {}};
  if (cached_image) {
    image_bytes.resize(channel.image_size());
    payload = {image_bytes.data(), channel.encode_image(image_bytes)};
  }
  fields::MessageView msg;
  msg.kind = image ? fields::MessageView::Kind::Image : fields::MessageView::Kind::Update;
  msg.topic = channel.topic;
  msg.channel = channel.id;
  msg.seq = channel.seq;
  msg.payload_kind = channel.kind;
  msg.payload = payload;
  m.json = fields::message_json(msg, fields::broker_dictionary());
  return as_bytes(m.json);
}

}  // namespace

std::span<const uint8_t> of_message(const cache::Channel& channel, std::span<const uint8_t> payload, bool image) {
  return render(channel, payload, image, false);
}

std::span<const uint8_t> of_image(const cache::Channel& channel) { return render(channel, {}, true, true); }

size_t forget(size_t encoded) {
  memo().valid = false;
  return encoded;
}

std::string of_status(const cache::Channel& channel, wire::ChannelState state, wire::Code code,
                      std::string_view text) {
  fields::MessageView msg;
  msg.kind = fields::MessageView::Kind::Status;
  msg.topic = channel.topic;
  msg.channel = channel.id;
  msg.state = state;
  msg.code = code;
  msg.text = text;
  return fields::message_json(msg, fields::broker_dictionary());
}

}  // namespace tw::channel_json
