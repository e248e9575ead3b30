// Little-endian byte reading and writing over caller-owned memory.
// ByteWriter never allocates: it writes into a fixed span and records overflow,
// so encoders can target an arena or a connection buffer directly.
#pragma once
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

namespace tw::wire {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "Tickwire assumes a little-endian host");

class ByteWriter {
 public:
  ByteWriter(uint8_t* data, size_t capacity) : data_(data), cap_(capacity) {}
  explicit ByteWriter(std::span<uint8_t> out) : ByteWriter(out.data(), out.size()) {}

  void u8(uint8_t v) { put(&v, 1); }
  void u16(uint16_t v) { put(&v, 2); }
  void u32(uint32_t v) { put(&v, 4); }
  void u64(uint64_t v) { put(&v, 8); }
  void i8(int8_t v) { put(&v, 1); }
  void i64(int64_t v) { put(&v, 8); }
  void bytes(const void* p, size_t n) { put(p, n); }
  void bytes(std::span<const uint8_t> b) { put(b.data(), b.size()); }
  // A string prefixed by its u16 length; longer strings overflow the writer.
  void str16(std::string_view s) {
    if (s.size() > 0xFFFF) {
      overflow_ = true;
      return;
    }
    u16(static_cast<uint16_t>(s.size()));
    put(s.data(), s.size());
  }
  void patch_u32(size_t offset, uint32_t v) {
    if (offset + 4 <= len_) std::memcpy(data_ + offset, &v, 4);
  }

  size_t size() const { return len_; }
  bool overflow() const { return overflow_; }
  uint8_t* data() const { return data_; }

 private:
  void put(const void* p, size_t n) {
    if (overflow_ || n > cap_ - len_) {
      overflow_ = true;
      return;
    }
    if (n) std::memcpy(data_ + len_, p, n);
    len_ += n;
  }
  uint8_t* data_;
  size_t cap_;
  size_t len_ = 0;
  bool overflow_ = false;
};

// Reads fields in order; any read past the end sets failed() and yields zeros,
// so a decoder checks once at the end instead of after every field.
class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> in) : in_(in) {}

  uint8_t u8() { return get<uint8_t>(); }
  uint16_t u16() { return get<uint16_t>(); }
  uint32_t u32() { return get<uint32_t>(); }
  uint64_t u64() { return get<uint64_t>(); }
  int8_t i8() { return get<int8_t>(); }
  int64_t i64() { return get<int64_t>(); }
  std::string_view str16() {
    auto b = bytes(u16());
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }
  std::span<const uint8_t> bytes(size_t n) {
    if (failed_ || n > remaining()) {
      failed_ = true;
      return {};
    }
    auto out = in_.subspan(pos_, n);
    pos_ += n;
    return out;
  }
  std::span<const uint8_t> rest() { return bytes(remaining()); }

  size_t remaining() const { return in_.size() - pos_; }
  bool failed() const { return failed_; }
  bool at_end() const { return !failed_ && pos_ == in_.size(); }

 private:
  template <typename T>
  T get() {
    T v{};
    if (failed_ || sizeof(T) > remaining()) {
      failed_ = true;
      return v;
    }
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::span<const uint8_t> in_;
  size_t pos_ = 0;
  bool failed_ = false;
};

}  // namespace tw::wire
