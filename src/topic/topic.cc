// Wildcard grammar (see topic.h for examples):
//   - levels are separated by '/', none may be empty;
//   - '*' stands for exactly one level, '>' for one or more and only as the last level;
//   - a wildcard is always a whole level ("A/b*" is rejected, not read as a prefix);
//   - "A/>" does not match "A": unlike MQTT's '#', '>' needs at least one level.
#include "topic/topic.h"

#include "base/unicode.h"
#include "topic/levels.h"

namespace tw::topic {
namespace {

size_t count_levels(std::string_view path) {
  size_t levels = 1;
  for (char c : path) {
    if (c == '/') ++levels;
  }
  return levels;
}

Error validate_level(std::string_view level, bool is_last, bool wildcards_allowed) {
  if (level.empty()) return Error::EmptyLevel;
  if (level.find_first_of("*>") == std::string_view::npos) return Error::Ok;
  if (!wildcards_allowed) return Error::WildcardInTopic;
  if (level.size() != 1) return Error::PartialWildcard;
  if (level == kGreater && !is_last) return Error::GreaterNotLast;
  return Error::Ok;
}

// Whole-string checks first, so that the error names the most basic problem.
Error validate_path(std::string_view path, const Limits& limits, bool wildcards_allowed) {
  if (path.empty()) return Error::Empty;
  if (path.size() > limits.max_length) return Error::TooLong;
  if (unicode::find_fault(path) != unicode::TextFault::None) return Error::InvalidCharacter;
  if (count_levels(path) > limits.max_depth) return Error::TooDeep;
  size_t start = 0;
  for (;;) {
    const size_t slash = path.find('/', start);
    const bool is_last = slash == std::string_view::npos;
    const auto level = path.substr(start, is_last ? std::string_view::npos : slash - start);
    const Error error = validate_level(level, is_last, wildcards_allowed);
    if (error != Error::Ok || is_last) return error;
    start = slash + 1;
  }
}

}  // namespace

const char* describe(Error e) {
  switch (e) {
    case Error::Ok: return "The topic is valid.";
    case Error::Empty: return "The topic is empty.";
    case Error::TooLong: return "The topic is longer than the configured maximum length.";
    case Error::TooDeep: return "The topic has more levels than the configured maximum depth.";
    case Error::EmptyLevel:
      return "The topic has an empty level (a leading, trailing or doubled '/').";
    case Error::WildcardInTopic:
      return "A topic (to publish, register or snapshot) may not contain a wildcard level ('*' or '>'); "
             "patterns are for subscribing.";
    case Error::GreaterNotLast: return "The wildcard '>' may only be the last level of a pattern.";
    case Error::PartialWildcard:
      return "A wildcard ('*' or '>') must be a whole level, not part of one.";
    case Error::InvalidCharacter:
      return "The topic is not UTF-8, or contains a control, format or separator character (Unicode Cc, Cf, Zl, Zp: "
             "NUL, newline, U+0085, zero-width space, bidirectional controls ...) or a noncharacter.";
  }
  return "Unknown topic error.";
}

Error validate_topic(std::string_view topic, const Limits& limits) {
  return validate_path(topic, limits, /*wildcards_allowed=*/false);
}

Error validate_pattern(std::string_view pattern, const Limits& limits) {
  return validate_path(pattern, limits, /*wildcards_allowed=*/true);
}

bool is_wildcard(std::string_view pattern) {
  while (!pattern.empty()) {
    const auto [level, rest] = split_first_level(pattern);
    if (level == kStar || level == kGreater) return true;
    pattern = rest;
  }
  return false;
}

bool matches(std::string_view pattern, std::string_view topic) {
  if (pattern.empty() || topic.empty()) return false;
  for (;;) {
    const auto p = split_first_level(pattern);
    const auto t = split_first_level(topic);
    // Both still hold at least one level here, which is all that '>' needs.
    if (p.level == kGreater) return true;
    if (p.level != kStar && p.level != t.level) return false;
    pattern = p.rest;
    topic = t.rest;
    if (pattern.empty() || topic.empty()) return pattern.empty() && topic.empty();
  }
}

std::string_view service_of(std::string_view topic) {
  return split_first_level(topic).level;
}

namespace {

// Splits off the first level of `rest`; false when nothing is left.
bool next_level(std::string_view& rest, std::string_view& level, bool& ended) {
  if (ended) return false;
  size_t slash = rest.find('/');
  level = rest.substr(0, slash);
  if (slash == std::string_view::npos) {
    ended = true;
    rest = {};
  } else {
    rest.remove_prefix(slash + 1);
  }
  return true;
}

}  // namespace

bool overlaps(std::string_view a, std::string_view b) {
  bool a_end = false, b_end = false;
  std::string_view la, lb;
  for (;;) {
    const bool has_a = next_level(a, la, a_end), has_b = next_level(b, lb, b_end);
    if (!has_a || !has_b) return has_a == has_b;
    if (la == ">" || lb == ">") return true;  // '>' takes one or more levels: the other has one here
    if (la != "*" && lb != "*" && la != lb) return false;
  }
}

bool covers(std::string_view outer, std::string_view inner) {
  bool o_end = false, i_end = false;
  std::string_view lo, li;
  for (;;) {
    const bool has_o = next_level(outer, lo, o_end), has_i = next_level(inner, li, i_end);
    if (!has_o || !has_i) return has_o == has_i;
    if (lo == ">") return true;
    if (li == ">") return false;  // only '>' covers '>'
    if (lo == "*") continue;
    if (li == "*" || lo != li) return false;
  }
}

}  // namespace tw::topic
