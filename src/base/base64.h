// Standard base64 (RFC 4648, with padding): HTTP Basic credentials, and the
// keys and values of etcd's JSON gateway.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace tw {

std::string base64_encode(std::string_view bytes);
// Nullopt on input that is not well-formed base64.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace tw
