// Topics and subscription patterns.
//
// A topic is a '/'-separated path of levels; the first level names the service.
//   valid topics:     "NYSE/EQ/IBM", "DEMO", "A/b-c/d_e.1"
//   invalid topics:   "", "/A", "A/", "A//B", "A/*", "A/>", longer than max_length,
//                     deeper than max_depth, not UTF-8, containing a hidden character
//                     (control, format, line or paragraph separator, noncharacter:
//                     base/unicode.h), e.g. "A/\n", "A/I\u200BBM", "A/\u202EMBI"
// A pattern may use '*' (exactly one level, never empty) and, as the last level
// only, '>' (one or more levels). A wildcard must be the whole level.
//   valid patterns:   "NYSE/EQ/IBM", "NYSE/*/IBM", "NYSE/>", "*/EQ/>", ">", "*"
//   invalid patterns: "A/>/B", "A/b*", "A/>x", "A//B", ""
//   valid but not matching:  "A/>" vs "A" ('>' needs at least one level),
//                            "A/*" vs "A" and vs "A/B/C", "*" vs "A/B"
#pragma once
#include <cstddef>
#include <string_view>

namespace tw::topic {

struct Limits {
  size_t max_length = 256;  // bytes
  size_t max_depth = 16;    // levels
};

enum class Error {
  Ok = 0,
  Empty,
  TooLong,
  TooDeep,
  EmptyLevel,
  WildcardInTopic,      // '*' or '>' in a publish topic
  GreaterNotLast,       // '>' before the last level
  PartialWildcard,      // wildcard mixed with other characters in one level
  InvalidCharacter,     // not UTF-8, or a hidden character (base/unicode.h)
};
const char* describe(Error e);  // a clear, user-facing sentence

Error validate_topic(std::string_view topic, const Limits& limits);
Error validate_pattern(std::string_view pattern, const Limits& limits);

bool is_wildcard(std::string_view pattern);  // contains a '*' or '>' level
// Both arguments must be valid; a literal pattern matches only itself.
bool matches(std::string_view pattern, std::string_view topic);
std::string_view service_of(std::string_view topic);  // the first level

// Pattern relations, level by level (both arguments valid patterns or topics).
// Whether some topic matches both.
bool overlaps(std::string_view a, std::string_view b);
// Whether every topic `inner` matches is matched by `outer`.
bool covers(std::string_view outer, std::string_view inner);

}  // namespace tw::topic
