// The WebSocket frame codec (RFC 6455 section 5), allocation-free, no I/O.
//
//    0                   1                   2                   3
//    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//   +-+-+-+-+-------+-+-------------+-------------------------------+
//   |F|R|R|R| opcode|M| Payload len |    Extended payload length    |
//   |I|S|S|S|  (4)  |A|     (7)     |             (16/64)           |
//   |N|V|V|V|       |S|             |   (if payload len==126/127)   |
//   | |1|2|3|       |K|             |                               |
//   +-+-+-+-+-------+-+-------------+ - - - - - - - - - - - - - - - +
//   |     Extended payload length continued, if payload len == 127  |
//   + - - - - - - - - - - - - - - - +-------------------------------+
//   |                               |Masking-key, if MASK set to 1  |
//   +-------------------------------+-------------------------------+
//   | Masking-key (continued)       |          Payload Data         |
//   +-------------------------------- - - - - - - - - - - - - - - - +
//
// Rules enforced on what is read (Reader): RSV bits zero (no extension is
// negotiated), known opcodes, control frames unfragmented and at most 125
// bytes, lengths in their shortest form and below 2^63, frames from a client
// masked and from a server not (section 5.1), continuation frames only inside
// a fragmented message and data frames never inside one, a message at most
// max_message bytes over all its fragments (1009), text valid UTF-8 (1007),
// a close payload of 0 bytes or a valid code with UTF-8 reason.
//
// The `web` stream session writes its text frames with encode_header into
// its own output (server frames are not masked, so the payload is the JSON
// itself): see transport.h, Framing::TextMessages.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tw::websocket {

enum class Opcode : uint8_t { Continuation = 0, Text = 1, Binary = 2, Close = 8, Ping = 9, Pong = 10 };

// Close codes (section 7.4.1) this broker sends or checks.
enum class CloseCode : uint16_t {
  Normal = 1000,
  GoingAway = 1001,
  ProtocolError = 1002,
  Unsupported = 1003,      // a data type the endpoint does not take (text on /mqtt)
  NoStatus = 1005,         // never sent: "the close frame had no code"
  InvalidPayload = 1007,   // text that is not UTF-8
  PolicyViolation = 1008,
  TooBig = 1009,           // over max_message
  InternalError = 1011,
};

// Who reads the frames: a server reads a client's frames (masked), a client a server's (unmasked).
enum class Role : uint8_t { Server, Client };

inline constexpr size_t kMaxHeaderBytes = 14;  // 2 + 8 (length) + 4 (mask)
inline constexpr size_t kMaxControlPayload = 125;

// Writes a frame header into `out` (kMaxHeaderBytes of room); returns its
// size. `mask` null: an unmasked (server) frame.
size_t encode_header(uint8_t* out, Opcode opcode, bool fin, uint64_t payload_length, const uint8_t* mask = nullptr);
// XORs `payload` with the mask, `offset` bytes into the frame's payload.
void apply_mask(std::span<uint8_t> payload, const uint8_t mask[4], uint64_t offset);
// A whole frame as bytes (tests, clients, control frames).
std::string encode_frame(Opcode opcode, std::string_view payload, bool fin = true, const uint8_t* mask = nullptr);
// A close frame's payload: the code, big-endian, then the reason (cut to fit 125 bytes).
std::string close_payload(CloseCode code, std::string_view reason);
// Whether a received close code may appear on the wire (section 7.4).
bool valid_close_code(uint16_t code);

// Reads a byte stream of frames into messages, one step at a time. Binary
// message bytes are passed on as they arrive (a step per piece, unmasked in
// place); a text message is collected (bounded by max_message) and passed on
// whole once its UTF-8 is checked. Owned by one connection.
class Reader {
 public:
  struct Settings {
    Role role = Role::Server;
    uint64_t max_message = 1u << 20;
  };
  enum class Kind : uint8_t { NeedMore, Data, Ping, Pong, Close, Error };
  struct Step {
    Kind kind = Kind::NeedMore;
    size_t consumed = 0;                // bytes of the input this step used
    std::span<const uint8_t> payload;   // Data: message bytes; Ping/Pong: its payload; Close: the reason
    Opcode opcode = Opcode::Binary;     // Data: Text or Binary
    bool message_end = false;           // Data: these are the message's last bytes
    uint16_t close_code = 0;            // Close: the peer's code (1005 when none); Error: the code to close with
    std::string_view error;             // Error: why, for the log and the close frame
  };

  explicit Reader(Settings settings) : settings_(settings) {}

  // The next step from the front of `in`, whose bytes it may unmask in
  // place. `max_data`: at most this many binary bytes in a Data step.
  // After Error or Close the reader is done: further calls return the same kind.
  Step next(std::span<uint8_t> in, size_t max_data = SIZE_MAX);

 private:
  struct Header {
    bool fin = false;
    Opcode opcode = Opcode::Binary;
    bool masked = false;
    uint8_t mask[4] = {};
    uint64_t length = 0;
    size_t size = 0;
  };
  enum class HeaderStatus { Ok, NeedMore, Error };
  HeaderStatus parse_header(std::span<const uint8_t> in, Header& h);
  Step begin_frame(std::span<uint8_t> in, size_t max_data);
  Step control(std::span<uint8_t> in, const Header& h);
  Step payload(std::span<uint8_t> in, size_t header_size, size_t max_data);
  Step fail(CloseCode code, std::string_view why);

  Settings settings_;
  bool done_ = false;
  Step last_;                 // the final Close or Error, repeated
  bool in_frame_ = false;     // a data frame's payload is being read
  Header frame_;              // that frame
  uint64_t frame_offset_ = 0; // payload bytes of it already passed on
  bool in_message_ = false;   // a fragmented message continues
  Opcode message_opcode_ = Opcode::Binary;
  uint64_t message_bytes_ = 0;
  std::string text_;          // a text message being collected
  std::string control_;       // unmasked control payload, for the step's span
};

}  // namespace tw::websocket
