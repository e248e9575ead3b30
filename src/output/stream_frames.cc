#include "output/stream_frames.h"

namespace tw::output {

std::span<const uint8_t> StreamFrames::encode(const StreamEncoder& encoder) {
  const uint8_t s = encoder.slot();
  // reserve() may flush and reset the arena: read the generation after it.
  auto out = fanout_.reserve(encoder.stream_frame_max(channel_, payload_, image_));
  const size_t n = encoder.encode_stream(out, channel_, payload_, image_);
  const std::span<const uint8_t> frame = fanout_.commit(n);
  set(s, frame);
  generation_[s] = fanout_.generation();
  encoded_ |= bit(s);
  ++encodes_;
  return frame;
}

}  // namespace tw::output
