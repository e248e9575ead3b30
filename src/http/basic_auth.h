// HTTP Basic credentials (RFC 7617): "Basic base64(user:password)".
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "base/base64.h"

namespace tw::http {

struct Credentials {
  std::string user;
  std::string password;
};

// The credentials of an Authorization header value; nullopt when it is not
// Basic or not well-formed base64 of "user:password".
std::optional<Credentials> parse_basic(std::string_view authorization);

using tw::base64_decode;
using tw::base64_encode;

}  // namespace tw::http
