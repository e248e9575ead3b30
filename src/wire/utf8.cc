#include "wire/utf8.h"

#include "base/unicode.h"

namespace tw::wire {

bool valid_utf8(std::string_view text) { return unicode::valid_utf8(text); }

}  // namespace tw::wire
