#include "stream/frame_reader.h"

#include <cstring>
#include <string_view>

namespace tw::stream {
namespace {

bool known(uint8_t op) { return op <= 2 || (op >= 8 && op <= 10); }

}  // namespace

Cut read_frame_header(std::span<const uint8_t> in, size_t max_payload, Frame& f) {
  if (in.size() < 2) return Cut::NeedMore;
  const uint8_t b0 = in[0], b1 = in[1];
  if ((b0 & 0x70) != 0 || !known(b0 & 0x0F) || (b1 & 0x80) == 0) return Cut::Bad;  // no extension is negotiated
  f.fin = (b0 & 0x80) != 0;
  f.opcode = static_cast<Opcode>(b0 & 0x0F);
  const uint8_t len7 = b1 & 0x7F;
  size_t pos = 2;
  if (len7 == 126) {
    if (in.size() < 4) return Cut::NeedMore;
    f.length = uint64_t{in[2]} << 8 | in[3];
    pos = 4;
  } else if (len7 == 127) {
    if (in.size() < 10) return Cut::NeedMore;
    f.length = 0;
    for (int i = 0; i < 8; ++i) f.length = f.length << 8 | in[2 + i];
    if (f.length >> 63) return Cut::Bad;
    pos = 10;
  } else {
    f.length = len7;
  }
  if (f.control() && (!f.fin || f.length > 125)) return Cut::Bad;
  if (f.length > max_payload) return Cut::TooBig;
  if (in.size() < pos + 4) return Cut::NeedMore;
  std::memcpy(f.mask, in.data() + pos, 4);
  f.header_size = pos + 4;
  return Cut::Ok;
}

size_t encode_control(std::span<uint8_t> out, Opcode opcode, std::span<const uint8_t> payload) {
  if (payload.size() > 125 || out.size() < 2 + payload.size()) return 0;
  out[0] = static_cast<uint8_t>(0x80 | static_cast<uint8_t>(opcode));
  out[1] = static_cast<uint8_t>(payload.size());
  if (!payload.empty()) std::memcpy(out.data() + 2, payload.data(), payload.size());
  return 2 + payload.size();
}

size_t encode_close(std::span<uint8_t> out, CloseCode code, std::string_view reason) {
  size_t n = std::min<size_t>(reason.size(), 123);
  while (n > 0 && n < reason.size() && (static_cast<uint8_t>(reason[n]) & 0xC0) == 0x80) --n;  // whole characters
  uint8_t payload[125];
  payload[0] = static_cast<uint8_t>(static_cast<uint16_t>(code) >> 8);
  payload[1] = static_cast<uint8_t>(static_cast<uint16_t>(code));
  std::memcpy(payload + 2, reason.data(), n);
  return encode_control(out, Opcode::Close, {payload, 2 + n});
}

}  // namespace tw::stream
