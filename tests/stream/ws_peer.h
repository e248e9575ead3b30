// The browser's side of /stream for the tests: client frames (masked, as
// RFC 6455 requires of a client) and the server's frames cut and decoded.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tw::stream::testing {

using Bytes = std::vector<uint8_t>;

// One client frame: FIN/opcode byte, masked payload with a fixed key.
inline Bytes client_frame(uint8_t first_byte, std::string_view payload, bool masked = true) {
  Bytes f{first_byte};
  const size_t n = payload.size();
  const uint8_t mask_bit = masked ? 0x80 : 0;
  if (n < 126) {
    f.push_back(static_cast<uint8_t>(mask_bit | n));
  } else if (n <= 0xFFFF) {
    f.insert(f.end(), {static_cast<uint8_t>(mask_bit | 126), static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n)});
  } else {
    f.push_back(static_cast<uint8_t>(mask_bit | 127));
    for (int i = 7; i >= 0; --i) f.push_back(static_cast<uint8_t>(uint64_t{n} >> (8 * i)));
  }
  const uint8_t key[4] = {0x37, 0xfa, 0x21, 0x3d};
  if (masked) f.insert(f.end(), key, key + 4);
  for (size_t i = 0; i < n; ++i) f.push_back(static_cast<uint8_t>(payload[i] ^ (masked ? key[i & 3] : 0)));
  return f;
}
inline Bytes text(std::string_view json) { return client_frame(0x81, json); }

// A server frame: its opcode and payload.
struct ServerFrame {
  uint8_t first = 0;
  std::string payload;
  uint8_t opcode() const { return first & 0x0F; }
  nlohmann::ordered_json json() const { return nlohmann::ordered_json::parse(payload); }
  // A Close frame's status code.
  uint16_t close_code() const {
    return payload.size() < 2 ? 0 : static_cast<uint16_t>(static_cast<uint8_t>(payload[0]) << 8 | static_cast<uint8_t>(payload[1]));
  }
};

// Cuts the server frames off the front of `in` (server frames are never masked).
inline std::vector<ServerFrame> cut_server_frames(Bytes& in) {
  std::vector<ServerFrame> out;
  size_t pos = 0;
  while (in.size() - pos >= 2) {
    const uint8_t b0 = in[pos], len7 = in[pos + 1] & 0x7F;
    size_t head = 2;
    uint64_t n = len7;
    if (len7 == 126) {
      if (in.size() - pos < 4) break;
      head = 4;
      n = uint64_t{in[pos + 2]} << 8 | in[pos + 3];
    } else if (len7 == 127) {
      if (in.size() - pos < 10) break;
      head = 10;
      n = 0;
      for (int i = 0; i < 8; ++i) n = n << 8 | in[pos + 2 + i];
    }
    if (in.size() - pos < head + n) break;
    out.push_back({b0, std::string(in.begin() + static_cast<long>(pos + head),
                                   in.begin() + static_cast<long>(pos + head + n))});
    pos += head + n;
  }
  in.erase(in.begin(), in.begin() + static_cast<long>(pos));
  return out;
}

}  // namespace tw::stream::testing
