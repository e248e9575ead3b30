#include "tier/link.h"

#include <cstring>

#include "base/log.h"

namespace tw::tier {
namespace {

void put_u16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }
void put_u32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
uint16_t get_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
uint32_t get_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The text and its NUL (an empty view may have no data pointer at all).
void put_text(uint8_t* p, std::string_view text) {
  if (!text.empty()) std::memcpy(p, text.data(), text.size());
  p[text.size()] = 0;
}

}  // namespace

// Header: op u8, flags u8, state u8, pad u8, code u16, len_a u16, len_b u16,
// pad u16, token u32, id u32, arg u32; then a, NUL, b, NUL, bytes.
size_t record_head_size(const Record& r) { return kRecordHeader + r.a.size() + 1 + r.b.size() + 1; }
size_t record_size(const Record& r) { return record_head_size(r) + r.prefix.size() + r.bytes.size(); }

void write_record(std::span<uint8_t> out, const Record& r) {
  write_record_head(out, r, r.prefix.size() + r.bytes.size());
  uint8_t* p = out.data() + record_head_size(r);
  if (!r.prefix.empty()) std::memcpy(p, r.prefix.data(), r.prefix.size());
  if (!r.bytes.empty()) std::memcpy(p + r.prefix.size(), r.bytes.data(), r.bytes.size());
}

void write_record_head(std::span<uint8_t> out, const Record& r, size_t) {
  uint8_t* p = out.data();
  p[0] = static_cast<uint8_t>(r.op);
  p[1] = r.flags;
  p[2] = static_cast<uint8_t>(r.state);
  p[3] = 0;
  put_u16(p + 4, static_cast<uint16_t>(r.code));
  put_u16(p + 6, static_cast<uint16_t>(r.a.size()));
  put_u16(p + 8, static_cast<uint16_t>(r.b.size()));
  put_u16(p + 10, 0);
  put_u32(p + 12, r.token);
  put_u32(p + 16, r.id);
  put_u32(p + 20, r.arg);
  p += kRecordHeader;
  put_text(p, r.a);
  put_text(p + r.a.size() + 1, r.b);
}

bool read_record(std::span<const uint8_t> in, Record& r) {
  if (in.size() < kRecordHeader) return false;
  const uint8_t* p = in.data();
  const size_t len_a = get_u16(p + 6), len_b = get_u16(p + 8);
  if (in.size() < kRecordHeader + len_a + len_b + 2) return false;
  r.op = static_cast<Op>(p[0]);
  r.flags = p[1];
  r.state = static_cast<wire::ChannelState>(p[2]);
  r.code = static_cast<wire::Code>(get_u16(p + 4));
  r.token = get_u32(p + 12);
  r.id = get_u32(p + 16);
  r.arg = get_u32(p + 20);
  const char* text = reinterpret_cast<const char*>(p + kRecordHeader);
  r.a = {text, len_a};
  r.b = {text + len_a + 1, len_b};
  const size_t used = kRecordHeader + len_a + len_b + 2;
  r.bytes = in.subspan(used);
  return true;
}

void Pipe::push(const Record& r) {
  const size_t size = record_size(r);
  if (spill_read_ == spill_.size()) {
    auto space = ring_.reserve(size);
    if (!space.empty()) {
      write_record(space, r);
      ring_.commit(size);
      return;
    }
  }
  spill(r);
}

std::span<uint8_t> Pipe::begin_batch(const Record& r, size_t max_bytes) {
  if (spill_read_ != spill_.size()) return {};
  auto space = ring_.reserve(record_head_size(r) + max_bytes);
  return space.empty() ? space : space.subspan(record_head_size(r));
}

void Pipe::end_batch(const Record& r, size_t bytes) {
  // The reservation is still the ring's last one: rewrite its start.
  auto head = ring_.reserved(record_head_size(r));
  write_record_head(head, r, bytes);
  ring_.commit(record_head_size(r) + bytes);
}

void Pipe::spill(const Record& r) {
  const size_t size = record_size(r);
  if (!ring_.fits(size)) {
    // Would block the pipe for ever: rings are sized for max_frame, so this is a bug.
    TW_ERROR("link record of %zu bytes can never fit a %zu-byte ring: dropped", size, ring_.capacity());
    return;
  }
  const size_t at = spill_.size();
  spill_.resize(at + 4 + size);
  put_u32(spill_.data() + at, static_cast<uint32_t>(size));
  write_record({spill_.data() + at + 4, size}, r);
}

bool Pipe::drain_spill() {
  while (spill_read_ < spill_.size()) {
    const size_t size = get_u32(spill_.data() + spill_read_);
    auto space = ring_.reserve(size);
    if (space.empty()) return false;
    std::memcpy(space.data(), spill_.data() + spill_read_ + 4, size);
    ring_.commit(size);
    spill_read_ += 4 + size;
  }
  spill_.clear();
  spill_read_ = 0;
  return true;
}

}  // namespace tw::tier
