// Which channels a listing shows a user: the one decision behind the native
// LIST_CHANNELS and the admin API's /api/v1/channels and /api/v1/services.
#pragma once
#include <cstdint>
#include <string_view>

#include "auth/entitlements.h"

namespace tw::session {

// A channel the user may receive, live or delayed, is listed; every channel
// when `grants` is null (authentication off, or an admin asking the admin API).
inline bool listed_for(const auth::Grants* grants, std::string_view topic) {
  return grants == nullptr || grants->receives(topic, UINT32_MAX);
}

}  // namespace tw::session
