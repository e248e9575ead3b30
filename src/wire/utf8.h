// UTF-8 checks for text that comes from a client (docs/protocol.md,
// "Text"): topics, patterns, names, status texts and STRING field values are
// refused with INVALID_UTF8 when they are not valid UTF-8, so nothing the
// broker stores or passes on can break a consumer that decodes it as text.
#pragma once
#include <string_view>

#include "tickwire/wire/protocol.h"

namespace tw::wire {

// Well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
bool valid_utf8(std::string_view text);

// Every text field of a client's message is valid UTF-8.
inline bool valid_text(const Hello& m) { return valid_utf8(m.client_name); }
inline bool valid_text(const Subscribe& m) { return valid_utf8(m.pattern); }
inline bool valid_text(const Snapshot& m) { return valid_utf8(m.topic); }
inline bool valid_text(const Register& m) { return valid_utf8(m.topic); }
inline bool valid_text(const Provide& m) { return valid_utf8(m.service) && valid_utf8(m.pattern); }
inline bool valid_text(const Withdraw& m) { return valid_utf8(m.service); }
inline bool valid_text(const StreamStatus& m) { return valid_utf8(m.text); }
inline bool valid_text(const ListChannels& m) { return valid_utf8(m.service); }

}  // namespace tw::wire
