// Encoder: what a protocol encodes for the delivery policy. The policy
// (delivery_policy.h) decides what a subscriber gets and when; the encoder
// decides the bytes. Stream messages (StreamEncoder) are encoded once per
// protocol and shared; images and status notices are per subscriber.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "output/stream_frames.h"
#include "cache/channel.h"
#include "tickwire/wire/protocol.h"

namespace tw::session {

class Encoder : public output::StreamEncoder {
 public:
  using StreamEncoder::StreamEncoder;
  // The channel's current image, preceded by its introduction (topic) when
  // `introduce`. request_id 0: the image that (re)starts a stream; otherwise
  // the reply to that snapshot request.
  virtual size_t image_max(const cache::Channel& channel, bool introduce) const = 0;
  virtual size_t encode_image(std::span<uint8_t> out, const cache::Channel& channel, uint32_t request_id,
                              bool introduce) const = 0;
  // A channel state change or a gap notice (code MessagesDropped), preceded
  // by the introduction when `introduce`.
  virtual size_t status_max(const cache::Channel& channel, std::string_view text, bool introduce) const = 0;
  virtual size_t encode_status(std::span<uint8_t> out, const cache::Channel& channel, wire::ChannelState state,
                               wire::Code code, std::string_view text, bool introduce) const = 0;
};

}  // namespace tw::session
