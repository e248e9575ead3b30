#include "mqtt/topic_map.h"

namespace tw::mqtt {

bool map_filter(std::string_view filter, const topic::Limits& limits, Patterns& out) {
  out.count = 0;
  // Literal '*' and '>' would turn into broker wildcards.
  if (filter.find_first_of("*>") != std::string_view::npos) return false;
  std::string pattern(filter);
  for (char& c : pattern) c = c == '+' ? '*' : c == '#' ? '>' : c;
  if (topic::validate_pattern(pattern, limits) != topic::Error::Ok) return false;
  out.pattern[out.count++] = pattern;
  // "a/#" also matches "a" (4.7.1.2).
  if (pattern.size() > 2 && pattern.ends_with("/>")) {
    out.pattern[out.count++] = pattern.substr(0, pattern.size() - 2);
  }
  return true;
}

bool is_shared_filter(std::string_view filter) { return filter.starts_with("$share/"); }

size_t shared_filter_start(std::string_view filter) {
  if (!is_shared_filter(filter)) return 0;
  constexpr size_t kPrefix = 7;  // "$share/"
  const size_t slash = filter.find('/', kPrefix);
  if (slash == std::string_view::npos || slash == kPrefix || slash + 1 == filter.size()) return 0;
  if (filter.substr(kPrefix, slash - kPrefix).find_first_of("+#") != std::string_view::npos) return 0;
  return slash + 1;
}

bool reaches_dollar_topics(std::string_view filter) { return !filter.starts_with('+') && !filter.starts_with('#'); }

}  // namespace tw::mqtt
