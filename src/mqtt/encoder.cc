#include "mqtt/encoder.h"

#include <cstring>

#include "base/clock.h"
#include "channel_json/channel_json.h"
#include "mqtt/codec.h"

namespace tw::mqtt {
namespace {

using channel_json::forget;

std::span<const uint8_t> json_of(const cache::Channel& channel, std::span<const uint8_t> payload, bool image) {
  return channel_json::of_message(channel, payload, image);
}

// The channel's cached (merged) image as JSON.
std::span<const uint8_t> cached_image_json(const cache::Channel& channel) { return channel_json::of_image(channel); }

bool is_json(const cache::Channel& channel) { return channel.kind == wire::PayloadKind::FieldList; }

}  // namespace

const MqttEncoder& MqttEncoder::instance(Version v) {
  static const MqttEncoder v311(Version::V311), v5(Version::V5);
  return v == Version::V5 ? v5 : v311;
}

// An MQTT-published channel's message carries its properties (MQTT 5): the
// channel keeps the last one's, and the message fanned out or sent as the
// image is that last one. JSON channels (native field lists) have none.
std::span<const uint8_t> MqttEncoder::properties_of(const cache::Channel& channel) const {
  return properties_for(channel.attributes);
}

std::span<const uint8_t> MqttEncoder::properties_for(std::span<const uint8_t> forwarded) const {
  return version_ == Version::V5 ? forwarded : std::span<const uint8_t>{};
}

size_t MqttEncoder::encode(std::span<uint8_t> out, const cache::Channel& channel, std::span<const uint8_t> body,
                           bool retain) const {
  return encode(out, channel, body, retain, channel.attributes);
}

size_t MqttEncoder::encode(std::span<uint8_t> out, const cache::Channel& channel, std::span<const uint8_t> body,
                           bool retain, std::span<const uint8_t> forwarded) const {
  // The clock is read only for a message with an expiry: the interval it
  // carries is what is left of it, and once it has passed the message is
  // sent to no one, 3.1.1 clients included (they just never see the interval).
  const uint64_t deadline = forwarded_deadline(forwarded);
  const uint64_t now = deadline != 0 ? monotonic_ns() : 0;
  if (deadline != 0 && now >= deadline) return 0;
  const auto properties = version_ == Version::V5 ? forwarded : std::span<const uint8_t>{};
  const size_t head = encode_publish_header(out, version_, channel.topic, 0, retain, 0, body.size(), properties, now);
  if (head == 0 || out.size() - head < body.size()) return 0;
  if (!body.empty()) std::memcpy(out.data() + head, body.data(), body.size());
  return head + body.size();
}

size_t MqttEncoder::frame_max(const cache::Channel& channel, size_t body) const {
  return publish_header_size(version_, channel.topic, 0, body, properties_of(channel)) + body;
}

size_t MqttEncoder::stream_frame_max(const cache::Channel& channel, std::span<const uint8_t> payload,
                                     bool image) const {
  return frame_max(channel, is_json(channel) ? json_of(channel, payload, image).size() : payload.size());
}

size_t MqttEncoder::encode_stream(std::span<uint8_t> out, const cache::Channel& channel,
                                  std::span<const uint8_t> payload, bool image) const {
  if (!is_json(channel)) return encode(out, channel, payload, false);
  return forget(encode(out, channel, json_of(channel, payload, image), false));
}

size_t MqttEncoder::image_max(const cache::Channel& channel, bool retain, bool last_value) const {
  if (is_json(channel)) return frame_max(channel, cached_image_json(channel).size());
  const bool stored = retain && !last_value;
  const size_t body = stored ? channel.retained_opaque().size() : channel.image_size();
  return publish_header_size(version_, channel.topic, 0, body,
                             properties_for(stored ? channel.retained_attributes() : channel.attributes)) +
         body;
}

size_t MqttEncoder::encode_image(std::span<uint8_t> out, const cache::Channel& channel, bool retain,
                                 bool last_value) const {
  if (is_json(channel)) return forget(encode(out, channel, cached_image_json(channel), retain));
  // The retained message (which may be one set aside: cache::Channel::retained)
  // unless the last value is asked for. An empty one is a cleared retained
  // message: nothing to send; nor for an expired one (encode gives 0).
  const bool stored = retain && !last_value;
  const auto body = stored ? channel.retained_opaque() : std::span<const uint8_t>(channel.opaque);
  if (body.empty()) return 0;
  return encode(out, channel, body, retain, stored ? channel.retained_attributes() : channel.attributes);
}

}  // namespace tw::mqtt
