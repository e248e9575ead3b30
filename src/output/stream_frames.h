// StreamFrames: one stream message's encoded frames, at most one per
// protocol. The router knows no encodings: it hands each subscriber the
// message with an empty StreamFrames, and the first subscriber of a protocol
// that queues it asks its StreamEncoder to encode it into the turn's arena;
// every later subscriber of that protocol references the same bytes. A
// message is encoded at most once per protocol, never per subscriber, and
// never for a protocol none of its subscribers speak (nor when every
// subscriber holds it back: conflated, lagging).
//
// An encoded frame lives in the arena until the arena is reset (Fanout's
// generation changes): a later subscriber then re-encodes. A frame that came
// encoded from elsewhere (a gateway's ring record, in the tier link's format,
// which is the native protocol's) is pinned: valid for the whole fan-out.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "cache/channel.h"
#include "output/fanout.h"

namespace tw::output {

// Encodes stream messages (UPDATE, or a published full image) for one protocol.
class StreamEncoder {
 public:
  // Protocols that share a broker: each encoder has its own slot (the
  // broker's protocol table hands them out, tier/protocols.h). Four are taken
  // by native, MQTT 3.1.1, MQTT 5 and the browser stream.
  static constexpr size_t kSlots = 8;
  static constexpr uint8_t kNativeSlot = 0;  // also the tier link's format

  explicit StreamEncoder(uint8_t slot) : slot_(slot) {}
  virtual ~StreamEncoder() = default;
  uint8_t slot() const { return slot_; }
  // Largest frame encode_stream can produce for this payload (a protocol
  // that renders the payload, MQTT's JSON, needs the bytes, not just their size).
  virtual size_t stream_frame_max(const cache::Channel& channel, std::span<const uint8_t> payload,
                                  bool image) const = 0;
  // The channel's current seq is the message's. Returns the frame's size, 0 if out is too small.
  virtual size_t encode_stream(std::span<uint8_t> out, const cache::Channel& channel,
                               std::span<const uint8_t> payload, bool image) const = 0;

 private:
  uint8_t slot_;
};

class StreamFrames {
 public:
  StreamFrames(Fanout& fanout, const cache::Channel& channel, std::span<const uint8_t> payload, bool image)
      : fanout_(fanout), channel_(channel), payload_(payload), image_(image) {}
  StreamFrames(const StreamFrames&) = delete;
  StreamFrames& operator=(const StreamFrames&) = delete;

  // A frame already encoded for `slot` that outlives the fan-out.
  void pin(uint8_t slot, std::span<const uint8_t> frame) {
    set(slot, frame);
    pinned_ |= bit(slot);
  }
  // The message as `encoder`'s protocol sends it: encoded on first use.
  std::span<const uint8_t> get(const StreamEncoder& encoder) {
    const uint8_t s = encoder.slot();
    const bool current = (encoded_ & bit(s)) != 0 && generation_[s] == fanout_.generation();
    if ((pinned_ & bit(s)) != 0 || current) return {data_[s], size_[s]};
    return encode(encoder);
  }
  // Encodes done so far (for tests and the hot-path benchmark).
  uint32_t encodes() const { return encodes_; }

 private:
  static_assert(StreamEncoder::kSlots <= 8, "one bit per slot in a uint8_t");
  static constexpr uint8_t bit(uint8_t slot) { return static_cast<uint8_t>(1u << slot); }
  void set(uint8_t slot, std::span<const uint8_t> frame) {
    data_[slot] = frame.data();
    size_[slot] = frame.size();
  }
  std::span<const uint8_t> encode(const StreamEncoder& encoder);

  Fanout& fanout_;
  const cache::Channel& channel_;
  std::span<const uint8_t> payload_;
  bool image_;
  // Which slots hold a frame: pinned (valid for the whole fan-out), or
  // encoded into the arena in generation_[slot]. The arrays are written
  // before their bit is set and read only after: one is built per message
  // and fanned out, so nothing here is cleared up front (clearing 8 slots
  // was a 192-byte memset per message).
  uint8_t pinned_ = 0;
  uint8_t encoded_ = 0;
  uint32_t encodes_ = 0;
  const uint8_t* data_[StreamEncoder::kSlots];
  size_t size_[StreamEncoder::kSlots];
  uint64_t generation_[StreamEncoder::kSlots];
};

}  // namespace tw::output
