#include "auth/password.h"

#include <argon2.h>
#include <sys/random.h>

#include <vector>

namespace tw::auth {

namespace {
constexpr size_t kSaltBytes = 16;
constexpr size_t kHashBytes = 32;
}  // namespace

Result<std::string> hash_password(std::string_view password, const HashCost& cost) {
  uint8_t salt[kSaltBytes];
  if (getrandom(salt, sizeof salt, 0) != static_cast<ssize_t>(sizeof salt)) return Error{"getrandom failed"};
  const size_t length = argon2_encodedlen(cost.time, cost.memory_kib, cost.lanes, kSaltBytes, kHashBytes, Argon2_id);
  std::vector<char> encoded(length);
  int rc = argon2id_hash_encoded(cost.time, cost.memory_kib, cost.lanes, password.data(), password.size(), salt,
                                 sizeof salt, kHashBytes, encoded.data(), encoded.size());
  if (rc != ARGON2_OK) return Error{std::string("argon2id: ") + argon2_error_message(rc)};
  return std::string(encoded.data());
}

bool verify_password(const std::string& encoded, std::string_view password) {
  return argon2id_verify(encoded.c_str(), password.data(), password.size()) == ARGON2_OK;
}

}  // namespace tw::auth
