// Record: one message as the log stores it. On disk, little-endian, with no
// padding, records back to back in a segment file:
//
//   u32 size          the whole record, this header included
//   u32 crc           CRC-32C of every byte after this field (crc32c.h)
//   u64 seq           its sequence number in the log (one more than the record before)
//   u64 timestamp_ns  when it was appended (wall clock, ns since the epoch)
//   u16 topic_size    u8 flags    u8 reserved (0)
//   topic             topic_size bytes
//   payload           size - 28 - topic_size bytes
//
// The size comes first so that a reader can step over a record without
// decoding it, and the checksum covers the sequence, so that a record
// copied to the wrong place does not pass for the one that belongs there.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace tw::store {

struct Record {
  uint64_t seq = 0;
  uint64_t timestamp_ns = 0;
  uint8_t flags = 0;
  std::string_view topic;
  std::span<const uint8_t> payload;
};

inline constexpr size_t kRecordHeader = 28;
inline constexpr size_t kMaxTopic = 0xFFFF;

inline size_t record_size(std::string_view topic, size_t payload_size) {
  return kRecordHeader + topic.size() + payload_size;
}
// Writes the record into `out` (at least record_size bytes); returns its size.
size_t encode_record(std::span<uint8_t> out, const Record& record);

enum class Decoded {
  Ok,
  Incomplete,  // the bytes end inside the record (a torn tail, or read more)
  Corrupt,     // a size that cannot be, or a checksum that does not match
};
// Decodes the record at the start of `in`; on Ok, `out` views `in` and `size` is the record's size.
Decoded decode_record(std::span<const uint8_t> in, Record& out, size_t& size);

}  // namespace tw::store
