// The client's side of /stream's WebSocket frames (RFC 6455 5.2): cuts one
// frame off the front of the input and checks what a server must check of a
// client's frame. Frame layout:
//   byte 0: FIN(1) RSV1-3(3) opcode(4)
//   byte 1: MASK(1) length(7): 0-125, or 126 + u16, or 127 + u64 (big-endian, MSB 0)
//   then the 4-byte masking key (always present from a client), then the payload XOR the key.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace tw::stream {

enum class Opcode : uint8_t { Continuation = 0, Text = 1, Binary = 2, Close = 8, Ping = 9, Pong = 10 };

// RFC 6455 7.4.1 status codes the stream sends in its Close frames.
enum class CloseCode : uint16_t {
  Normal = 1000,
  GoingAway = 1001,
  ProtocolError = 1002,
  Unsupported = 1003,
  InvalidData = 1007,  // a text message that is not UTF-8
  Policy = 1008,       // a request the broker refuses (bad JSON, no credentials, slow consumer)
  TooBig = 1009,
};

struct Frame {
  bool fin = false;
  Opcode opcode = Opcode::Text;
  size_t header_size = 0;
  uint64_t length = 0;  // payload bytes
  uint8_t mask[4] = {};
  size_t size() const { return header_size + static_cast<size_t>(length); }
  bool control() const { return static_cast<uint8_t>(opcode) >= 8; }
};

enum class Cut { Ok, NeedMore, Bad, TooBig };

// Reads the header at the front of `in`. Ok: `frame` describes it (its
// payload may not have arrived yet: compare frame.size() with in.size()).
// Bad: reserved bits, an unmasked frame, an unknown opcode, a control frame
// fragmented or over 125 bytes. TooBig: a payload over `max_payload`.
Cut read_frame_header(std::span<const uint8_t> in, size_t max_payload, Frame& frame);
// Appends the payload, unmasked, to `out` (whose size grows by frame.length).
template <typename Bytes>
void unmask_into(std::span<const uint8_t> in, const Frame& frame, Bytes& out) {
  const size_t at = out.size();
  out.resize(at + frame.length);
  for (size_t i = 0; i < frame.length; ++i) {
    out[at + i] = static_cast<typename Bytes::value_type>(in[frame.header_size + i] ^ frame.mask[i & 3]);
  }
}

// A control frame from the server (Ping, Pong, Close): at most 2 + 125 bytes.
inline constexpr size_t kControlFrameMax = 127;
size_t encode_control(std::span<uint8_t> out, Opcode opcode, std::span<const uint8_t> payload);
// A Close frame with its status code and reason (cut to fit 125 bytes at a UTF-8 boundary).
size_t encode_close(std::span<uint8_t> out, CloseCode code, std::string_view reason);

}  // namespace tw::stream
