// Frame splitting, and encode/decode of every message (protocol versions 1 to 5;
// the guaranteed frames are in guaranteed.h).
// Encoders write into caller memory and return the frame size, or 0 when the
// frame does not fit: they never allocate. Decoders return views into the input.
#pragma once
#include <cstddef>
#include <span>

#include "tickwire/wire/protocol.h"

namespace tw::wire {

struct Frame {
  MsgType type{};
  uint8_t flags = 0;
  std::span<const uint8_t> body;  // the bytes after the header
  size_t size = 0;                // whole frame, header included
};

enum class SplitResult { Frame, NeedMore, Malformed, TooLarge };

// Looks at the front of `in`: a complete frame, more bytes needed, or a header
// that can never be valid (length < 8, reserved bits set, or over max_frame).
SplitResult split_frame(std::span<const uint8_t> in, uint32_t max_frame, Frame& out);
// The length field of a header whose first 4 bytes are present, for sizing buffers.
uint32_t peek_length(std::span<const uint8_t> in);

// Body decoders: false when the body is truncated, has trailing bytes or bad enums.
bool decode(const Frame& f, Hello& out);
bool decode(const Frame& f, Welcome& out);
bool decode(const Frame& f, Subscribe& out);  // SUBSCRIBE (flags = policy) and UNSUBSCRIBE (flags 0)
bool decode(const Frame& f, Snapshot& out);
bool decode(const Frame& f, Register& out);
bool decode(const Frame& f, Publish& out);
bool decode(const Frame& f, Ack& out);
bool decode(const Frame& f, ChannelIntro& out);
bool decode(const Frame& f, Image& out);
bool decode(const Frame& f, Update& out);
bool decode(const Frame& f, StatusMsg& out);
bool decode(const Frame& f, ErrorMsg& out);
bool decode(const Frame& f, Provide& out);
bool decode(const Frame& f, Withdraw& out);
bool decode(const Frame& f, Request& out);
bool decode(const Frame& f, ReleaseMsg& out);
bool decode(const Frame& f, StreamStatus& out);
bool decode(const Frame& f, ListChannels& out);
bool decode(const Frame& f, ReloadMsg& out);
bool decode(const Frame& f, ChannelInfo& out);

size_t encode(std::span<uint8_t> out, const Hello& m);
size_t encode(std::span<uint8_t> out, const Welcome& m);
// SUBSCRIBE writes m.policy into the flags; UNSUBSCRIBE always writes flags 0.
size_t encode(std::span<uint8_t> out, MsgType type, const Subscribe& m);
size_t encode(std::span<uint8_t> out, const Snapshot& m);
size_t encode(std::span<uint8_t> out, const Register& m);
size_t encode(std::span<uint8_t> out, const Publish& m);
size_t encode(std::span<uint8_t> out, const Ack& m);
size_t encode(std::span<uint8_t> out, const ChannelIntro& m);
size_t encode(std::span<uint8_t> out, const Image& m);
size_t encode(std::span<uint8_t> out, const Update& m);
size_t encode(std::span<uint8_t> out, const StatusMsg& m);
size_t encode(std::span<uint8_t> out, const ErrorMsg& m);
size_t encode(std::span<uint8_t> out, const Provide& m);
size_t encode(std::span<uint8_t> out, const Withdraw& m);
size_t encode(std::span<uint8_t> out, const Request& m);
size_t encode(std::span<uint8_t> out, const ReleaseMsg& m);
size_t encode(std::span<uint8_t> out, const StreamStatus& m);
size_t encode(std::span<uint8_t> out, const ListChannels& m);
size_t encode(std::span<uint8_t> out, const ReloadMsg& m);
size_t encode(std::span<uint8_t> out, const ChannelInfo& m);
size_t encode_heartbeat(std::span<uint8_t> out);
// Writes the kImageFixedSize bytes of an IMAGE frame whose payload of
// payload_size bytes the caller has already placed right after them.
void encode_image_prefix(std::span<uint8_t> out, uint32_t channel_id, uint64_t seq, uint32_t request_id,
                         size_t payload_size);

// The largest frame each variable-size message can need, for sizing buffers.
inline constexpr size_t frame_size_for_payload(size_t fixed, size_t payload) { return fixed + payload; }

}  // namespace tw::wire
