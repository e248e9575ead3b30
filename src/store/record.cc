#include "store/record.h"

#include <cstring>

#include "store/crc32c.h"

namespace tw::store {
namespace {

template <typename T>
void put(uint8_t* at, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) at[i] = static_cast<uint8_t>(value >> (8 * i));
}

template <typename T>
T get(const uint8_t* at) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(static_cast<T>(at[i]) << (8 * i));
  return value;
}

}  // namespace

size_t encode_record(std::span<uint8_t> out, const Record& r) {
  const size_t size = record_size(r.topic, r.payload.size());
  uint8_t* p = out.data();
  put<uint32_t>(p, static_cast<uint32_t>(size));
  put<uint64_t>(p + 8, r.seq);
  put<uint64_t>(p + 16, r.timestamp_ns);
  put<uint16_t>(p + 24, static_cast<uint16_t>(r.topic.size()));
  p[26] = r.flags;
  p[27] = 0;
  std::memcpy(p + kRecordHeader, r.topic.data(), r.topic.size());
  if (!r.payload.empty()) std::memcpy(p + kRecordHeader + r.topic.size(), r.payload.data(), r.payload.size());
  put<uint32_t>(p + 4, crc32c({p + 8, size - 8}));
  return size;
}

Decoded decode_record(std::span<const uint8_t> in, Record& out, size_t& size) {
  if (in.size() < 4) return Decoded::Incomplete;
  size = get<uint32_t>(in.data());
  if (size < kRecordHeader) return Decoded::Corrupt;
  if (in.size() < size) return Decoded::Incomplete;
  const uint8_t* p = in.data();
  if (get<uint32_t>(p + 4) != crc32c({p + 8, size - 8})) return Decoded::Corrupt;
  const size_t topic_size = get<uint16_t>(p + 24);
  if (kRecordHeader + topic_size > size || p[27] != 0) return Decoded::Corrupt;
  out.seq = get<uint64_t>(p + 8);
  out.timestamp_ns = get<uint64_t>(p + 16);
  out.flags = p[26];
  out.topic = {reinterpret_cast<const char*>(p + kRecordHeader), topic_size};
  out.payload = {p + kRecordHeader + topic_size, size - kRecordHeader - topic_size};
  return Decoded::Ok;
}

}  // namespace tw::store
