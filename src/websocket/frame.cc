#include "websocket/frame.h"

#include <algorithm>
#include <cstring>

#include "wire/utf8.h"

namespace tw::websocket {

size_t encode_header(uint8_t* out, Opcode opcode, bool fin, uint64_t payload_length, const uint8_t* mask) {
  size_t n = 0;
  out[n++] = static_cast<uint8_t>((fin ? 0x80 : 0x00) | static_cast<uint8_t>(opcode));
  const uint8_t mask_bit = mask != nullptr ? 0x80 : 0x00;
  if (payload_length < 126) {
    out[n++] = static_cast<uint8_t>(mask_bit | payload_length);
  } else if (payload_length <= 0xFFFF) {
    out[n++] = mask_bit | 126;
    out[n++] = static_cast<uint8_t>(payload_length >> 8);
    out[n++] = static_cast<uint8_t>(payload_length);
  } else {
    out[n++] = mask_bit | 127;
    for (int shift = 56; shift >= 0; shift -= 8) out[n++] = static_cast<uint8_t>(payload_length >> shift);
  }
  if (mask != nullptr) {
    std::memcpy(out + n, mask, 4);
    n += 4;
  }
  return n;
}

void apply_mask(std::span<uint8_t> payload, const uint8_t mask[4], uint64_t offset) {
  for (size_t i = 0; i < payload.size(); ++i) payload[i] ^= mask[(offset + i) & 3];
}

std::string encode_frame(Opcode opcode, std::string_view payload, bool fin, const uint8_t* mask) {
  uint8_t header[kMaxHeaderBytes];
  const size_t size = encode_header(header, opcode, fin, payload.size(), mask);
  std::string frame(reinterpret_cast<const char*>(header), size);
  frame.append(payload);
  if (mask != nullptr) {
    apply_mask({reinterpret_cast<uint8_t*>(frame.data()) + size, payload.size()}, mask, 0);
  }
  return frame;
}

std::string close_payload(CloseCode code, std::string_view reason) {
  const auto value = static_cast<uint16_t>(code);
  std::string payload{static_cast<char>(value >> 8), static_cast<char>(value & 0xFF)};
  reason = reason.substr(0, kMaxControlPayload - 2);
  // Never cut inside a UTF-8 sequence: drop continuation bytes at the cut.
  while (!reason.empty() && !wire::valid_utf8(reason)) reason.remove_suffix(1);
  payload.append(reason);
  return payload;
}

bool valid_close_code(uint16_t code) {
  if (code >= 3000 && code <= 4999) return true;  // registered and private use
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014);
}

Reader::Step Reader::fail(CloseCode code, std::string_view why) {
  done_ = true;
  last_ = Step{};
  last_.kind = Kind::Error;
  last_.close_code = static_cast<uint16_t>(code);
  last_.error = why;
  return last_;
}

Reader::HeaderStatus Reader::parse_header(std::span<const uint8_t> in, Header& h) {
  if (in.size() < 2) return HeaderStatus::NeedMore;
  const uint8_t b0 = in[0], b1 = in[1];
  h.fin = (b0 & 0x80) != 0;
  h.opcode = static_cast<Opcode>(b0 & 0x0F);
  h.masked = (b1 & 0x80) != 0;
  size_t size = 2;
  uint64_t length = b1 & 0x7F;
  if (length == 126) {
    if (in.size() < 4) return HeaderStatus::NeedMore;
    length = (uint64_t{in[2]} << 8) | in[3];
    size = 4;
  } else if (length == 127) {
    if (in.size() < 10) return HeaderStatus::NeedMore;
    length = 0;
    for (size_t i = 2; i < 10; ++i) length = (length << 8) | in[i];
    size = 10;
  }
  if (h.masked) {
    if (in.size() < size + 4) return HeaderStatus::NeedMore;
    std::memcpy(h.mask, in.data() + size, 4);
    size += 4;
  }
  h.length = length;
  h.size = size;
  const uint8_t raw_length = b1 & 0x7F;
  if ((b0 & 0x70) != 0) return fail(CloseCode::ProtocolError, "reserved bits set (no extension was negotiated)"), HeaderStatus::Error;
  switch (h.opcode) {
    case Opcode::Continuation: case Opcode::Text: case Opcode::Binary:
    case Opcode::Close: case Opcode::Ping: case Opcode::Pong: break;
    default: return fail(CloseCode::ProtocolError, "unknown opcode"), HeaderStatus::Error;
  }
  if ((raw_length == 126 && length < 126) || (raw_length == 127 && (length <= 0xFFFF || (length >> 63) != 0))) {
    return fail(CloseCode::ProtocolError, "payload length not in its shortest form"), HeaderStatus::Error;
  }
  if (settings_.role == Role::Server && !h.masked) return fail(CloseCode::ProtocolError, "client frame not masked"), HeaderStatus::Error;
  if (settings_.role == Role::Client && h.masked) return fail(CloseCode::ProtocolError, "server frame masked"), HeaderStatus::Error;
  if (static_cast<uint8_t>(h.opcode) >= 8 && (!h.fin || length > kMaxControlPayload)) {
    return fail(CloseCode::ProtocolError, "control frame fragmented or over 125 bytes"), HeaderStatus::Error;
  }
  return HeaderStatus::Ok;
}

Reader::Step Reader::next(std::span<uint8_t> in, size_t max_data) {
  if (done_) return last_;
  if (in_frame_) return payload(in, 0, max_data);
  return begin_frame(in, max_data);
}

Reader::Step Reader::begin_frame(std::span<uint8_t> in, size_t max_data) {
  Header h;
  switch (parse_header(in, h)) {
    case HeaderStatus::NeedMore: return Step{};
    case HeaderStatus::Error: return last_;
    case HeaderStatus::Ok: break;
  }
  if (static_cast<uint8_t>(h.opcode) >= 8) {
    if (in.size() < h.size + h.length) return Step{};
    return control(in, h);
  }
  if (h.opcode == Opcode::Continuation && !in_message_) return fail(CloseCode::ProtocolError, "continuation frame outside a message");
  if (h.opcode != Opcode::Continuation && in_message_) return fail(CloseCode::ProtocolError, "new message inside a fragmented one");
  if (h.opcode != Opcode::Continuation) {
    message_opcode_ = h.opcode;
    message_bytes_ = 0;
    text_.clear();
  }
  if (h.length > settings_.max_message - message_bytes_) return fail(CloseCode::TooBig, "message over the size limit");
  in_message_ = true;
  message_bytes_ += h.length;
  in_frame_ = true;
  frame_ = h;
  frame_offset_ = 0;
  return payload(in, h.size, max_data);
}

Reader::Step Reader::payload(std::span<uint8_t> in, size_t header_size, size_t max_data) {
  const bool text = message_opcode_ == Opcode::Text;
  uint64_t n = std::min<uint64_t>(in.size() - header_size, frame_.length - frame_offset_);
  if (!text) n = std::min<uint64_t>(n, max_data);
  std::span<uint8_t> bytes = in.subspan(header_size, static_cast<size_t>(n));
  if (frame_.masked) apply_mask(bytes, frame_.mask, frame_offset_);
  frame_offset_ += n;
  const bool frame_done = frame_offset_ == frame_.length;
  const bool message_end = frame_done && frame_.fin;
  if (frame_done) in_frame_ = false;
  if (message_end) in_message_ = false;
  Step step;
  step.consumed = header_size + bytes.size();
  step.opcode = message_opcode_;
  step.message_end = message_end;
  if (text) {
    text_.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (!message_end) return step;  // NeedMore: the text is collected until its end
    if (!wire::valid_utf8(text_)) return fail(CloseCode::InvalidPayload, "text message is not valid UTF-8");
    step.payload = {reinterpret_cast<const uint8_t*>(text_.data()), text_.size()};
  } else {
    if (bytes.empty() && !message_end) return step;
    step.payload = bytes;
  }
  step.kind = Kind::Data;
  return step;
}

Reader::Step Reader::control(std::span<uint8_t> in, const Header& h) {
  std::span<uint8_t> bytes = in.subspan(h.size, static_cast<size_t>(h.length));
  control_.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (h.masked) apply_mask({reinterpret_cast<uint8_t*>(control_.data()), control_.size()}, h.mask, 0);
  Step step;
  step.consumed = h.size + bytes.size();
  step.payload = {reinterpret_cast<const uint8_t*>(control_.data()), control_.size()};
  if (h.opcode == Opcode::Ping) {
    step.kind = Kind::Ping;
    return step;
  }
  if (h.opcode == Opcode::Pong) {
    step.kind = Kind::Pong;
    return step;
  }
  step.kind = Kind::Close;
  step.close_code = static_cast<uint16_t>(CloseCode::NoStatus);
  if (control_.size() == 1) return fail(CloseCode::ProtocolError, "close frame with a one-byte payload");
  if (control_.size() >= 2) {
    step.close_code = static_cast<uint16_t>((static_cast<uint8_t>(control_[0]) << 8) | static_cast<uint8_t>(control_[1]));
    if (!valid_close_code(step.close_code)) return fail(CloseCode::ProtocolError, "close frame with an invalid code");
    if (!wire::valid_utf8(std::string_view(control_).substr(2))) {
      return fail(CloseCode::InvalidPayload, "close reason is not valid UTF-8");
    }
    step.payload = step.payload.subspan(2);
  }
  done_ = true;
  last_ = step;
  last_.consumed = 0;
  return step;
}

}  // namespace tw::websocket
