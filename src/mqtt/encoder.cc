#include "mqtt/encoder.h"

#include <cstring>
#include <string>
#include <vector>

#include "client/message_format.h"
#include "mqtt/codec.h"

namespace tw::mqtt {
namespace {

// A field-list message as JSON, rendered once per message and loop thread:
// the size query (…_max) and the encode that follows ask for the same one,
// and the encode forgets it (a later message could look the same: a
// channel freed and another at its address, with the same seq).
// The text is `tickwire sub --json`'s, from the same code.
struct JsonMemo {
  bool valid = false;
  const cache::Channel* channel = nullptr;
  uint64_t seq = 0;
  bool image = false;
  bool cached_image = false;
  const uint8_t* payload = nullptr;
  size_t payload_size = 0;
  std::string json;
};

JsonMemo& json_memo() {
  thread_local JsonMemo memo;
  return memo;
}

// The encode that used the memo's text: the next message renders its own.
size_t forget_json(size_t encoded) {
  json_memo().valid = false;
  return encoded;
}

std::span<const uint8_t> as_bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// A stream message's payload as JSON.
std::span<const uint8_t> json_of(const cache::Channel& channel, std::span<const uint8_t> payload, bool image,
                                 bool cached_image = false) {
  JsonMemo& memo = json_memo();
  thread_local std::vector<uint8_t> image_bytes;
  if (memo.valid && memo.channel == &channel && memo.seq == channel.seq && memo.image == image &&
      memo.cached_image == cached_image && memo.payload == payload.data() && memo.payload_size == payload.size()) {
    return as_bytes(memo.json);
  }
  memo = {true, &channel, channel.seq, image, cached_image, payload.data(), payload.size(), {}};
  if (cached_image) {
    image_bytes.resize(channel.image_size());
    payload = {image_bytes.data(), channel.encode_image(image_bytes)};
  }
  client::Message msg;
  msg.kind = image ? client::MessageKind::Image : client::MessageKind::Update;
  msg.topic = channel.topic;
  msg.channel_id = channel.id;
  msg.seq = channel.seq;
  msg.payload_kind = channel.kind;
  msg.payload = payload;
  memo.json = client::format_json(msg, fields::Dictionary::builtin());
  return as_bytes(memo.json);
}

// The channel's cached (merged) image as JSON.
std::span<const uint8_t> cached_image_json(const cache::Channel& channel) { return json_of(channel, {}, true, true); }

bool is_json(const cache::Channel& channel) { return channel.kind == wire::PayloadKind::FieldList; }

}  // namespace

const MqttEncoder& MqttEncoder::instance(Version v) {
  static const MqttEncoder v311(Version::V311), v5(Version::V5);
  return v == Version::V5 ? v5 : v311;
}

size_t MqttEncoder::encode(std::span<uint8_t> out, const cache::Channel& channel, std::span<const uint8_t> body,
                           bool retain) const {
  const size_t head = encode_publish_header(out, version_, channel.topic, 0, retain, 0, body.size());
  if (head == 0 || out.size() - head < body.size()) return 0;
  if (!body.empty()) std::memcpy(out.data() + head, body.data(), body.size());
  return head + body.size();
}

size_t MqttEncoder::stream_frame_max(const cache::Channel& channel, std::span<const uint8_t> payload,
                                     bool image) const {
  const size_t body = is_json(channel) ? json_of(channel, payload, image).size() : payload.size();
  return publish_header_size(version_, channel.topic, 0, body) + body;
}

size_t MqttEncoder::encode_stream(std::span<uint8_t> out, const cache::Channel& channel,
                                  std::span<const uint8_t> payload, bool image) const {
  if (!is_json(channel)) return encode(out, channel, payload, false);
  return forget_json(encode(out, channel, json_of(channel, payload, image), false));
}

size_t MqttEncoder::image_max(const cache::Channel& channel) const {
  const size_t body = is_json(channel) ? cached_image_json(channel).size() : channel.image_size();
  return publish_header_size(version_, channel.topic, 0, body) + body;
}

size_t MqttEncoder::encode_image(std::span<uint8_t> out, const cache::Channel& channel, bool retain) const {
  if (is_json(channel)) return forget_json(encode(out, channel, cached_image_json(channel), retain));
  // An empty opaque image is a cleared retained message: nothing to send.
  if (channel.opaque.empty()) return 0;
  return encode(out, channel, channel.opaque, retain);
}

}  // namespace tw::mqtt
