// HTTP Basic credentials (RFC 7617): "Basic base64(user:password)".
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace tw::http {

struct Credentials {
  std::string user;
  std::string password;
};

// The credentials of an Authorization header value; nullopt when it is not
// Basic or not well-formed base64 of "user:password".
std::optional<Credentials> parse_basic(std::string_view authorization);

// Standard base64 (with padding) of `bytes`, and its inverse (nullopt on bad input).
std::string base64_encode(std::string_view bytes);
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace tw::http
