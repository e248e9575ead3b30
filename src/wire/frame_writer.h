// Writing one native frame (docs/protocol.md, "Framing"): the header with a
// length patched in once the body is written. Shared by every encoder of
// src/wire (codec.cc, guaranteed.cc).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "tickwire/wire/bytes.h"
#include "tickwire/wire/protocol.h"

namespace tw::wire {

// Starts a frame of `type`; the length is patched by finish_frame().
inline ByteWriter begin_frame(std::span<uint8_t> out, MsgType type, uint8_t flags = 0) {
  ByteWriter w(out);
  w.u32(0);
  w.u8(static_cast<uint8_t>(type));
  w.u8(flags);
  w.u16(0);
  return w;
}

// The frame's size, or 0 when `out` was too small for it.
inline size_t finish_frame(ByteWriter& w) {
  if (w.overflow()) return 0;
  w.patch_u32(0, static_cast<uint32_t>(w.size()));
  return w.size();
}

}  // namespace tw::wire
