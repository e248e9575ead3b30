#include "http/basic_auth.h"

#include <cctype>
#include <strings.h>

namespace tw::http {

std::optional<Credentials> parse_basic(std::string_view authorization) {
  while (!authorization.empty() && authorization.front() == ' ') authorization.remove_prefix(1);
  if (authorization.size() < 6 || strncasecmp(authorization.data(), "basic ", 6) != 0) return std::nullopt;
  std::string_view encoded = authorization.substr(6);
  while (!encoded.empty() && encoded.front() == ' ') encoded.remove_prefix(1);
  while (!encoded.empty() && encoded.back() == ' ') encoded.remove_suffix(1);
  auto decoded = base64_decode(encoded);
  if (!decoded) return std::nullopt;
  const size_t colon = decoded->find(':');
  if (colon == std::string::npos) return std::nullopt;
  return Credentials{decoded->substr(0, colon), decoded->substr(colon + 1)};
}

}  // namespace tw::http
