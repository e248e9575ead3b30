// Password hashes: argon2id (RFC 9106) through libargon2, in the PHC string
// format "$argon2id$v=19$m=...,t=...,p=...$salt$hash", so the cost travels
// with each hash and can be raised without breaking older ones.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "tickwire/base/result.h"

namespace tw::auth {

struct HashCost {
  uint32_t time = 3;            // passes
  uint32_t memory_kib = 65536;  // 64 MiB
  uint32_t lanes = 1;
};

// A new hash of `password` with a random 16-byte salt.
Result<std::string> hash_password(std::string_view password, const HashCost& cost = {});
// Whether `password` matches `encoded`; the comparison is constant-time (libargon2).
// Costs what the hash's parameters say: milliseconds. Never on a loop thread.
bool verify_password(const std::string& encoded, std::string_view password);

}  // namespace tw::auth
