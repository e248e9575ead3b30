// Topic and name validation against arbitrary bytes (base/unicode.h,
// topic/topic.h): a topic or pattern that validates is UTF-8 with no hidden
// character; the escape that log lines use is always one line of visible
// UTF-8; the UTF-8 checks agree with each other.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/unicode.h"
#include "topic/topic.h"
#include "wire/utf8.h"

namespace {
void check(bool condition) {
  if (!condition) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tw;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const unicode::TextFault fault = unicode::find_fault(text);
  const bool utf8 = unicode::valid_utf8(text);
  check(utf8 == wire::valid_utf8(text));
  check(!utf8 || fault != unicode::TextFault::NotUtf8);
  check(utf8 || fault != unicode::TextFault::None);
  check(unicode::needs_escape(text) == (fault != unicode::TextFault::None || text.find('\\') != std::string_view::npos));

  const std::string escaped = unicode::escape(text);
  check(unicode::valid_utf8(escaped));
  check(unicode::find_fault(escaped) == unicode::TextFault::None);
  check(escaped.size() >= size);

  const topic::Limits limits{.max_length = 1024, .max_depth = 64};
  if (topic::validate_topic(text, limits) == topic::Error::Ok) {
    check(fault == unicode::TextFault::None);
    check(topic::validate_pattern(text, limits) == topic::Error::Ok);
  }
  if (topic::validate_pattern(text, limits) == topic::Error::Ok) check(fault == unicode::TextFault::None);
  return 0;
}
