// CRC-32C (Castagnoli), the checksum of every stored record: the one iSCSI,
// ext4 metadata and Kafka's record batches use, with an instruction of its
// own on x86-64 (SSE 4.2) so that checking a record costs less than reading
// it. Debian 12 packages no CRC-32C library for C++; this is 60 lines.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

namespace tw::store {

// The checksum of `bytes`, continuing from `crc` (0 to start).
uint32_t crc32c(std::span<const uint8_t> bytes, uint32_t crc = 0);

}  // namespace tw::store
