// Internal: which keys a broker config has, so the TOML reader can tell an
// unknown key from a key of the wrong type before setting it.
#pragma once
#include <string_view>

namespace tw::config::detail {

enum class KeyKind { Unknown, Integer, String, Boolean };

// `key` is the dotted TOML name: "heartbeat_ms", "limits.max_frame".
KeyKind key_kind(std::string_view key);

}  // namespace tw::config::detail
