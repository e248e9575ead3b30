#include "mqtt/topic_map.h"

namespace tw::mqtt {

namespace {
// Calls `level` for each '/'-separated level of `path`, empty ones included.
template <typename Level>
void for_each_level(std::string_view path, Level&& level) {
  for (size_t start = 0;;) {
    const size_t slash = path.find('/', start);
    level(path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) return;
    start = slash + 1;
  }
}

bool has_empty_level(std::string_view path) {
  return path.empty() || path.front() == '/' || path.back() == '/' || path.find("//") != std::string_view::npos;
}
}  // namespace

std::string_view broker_topic(std::string_view topic, std::string& scratch) {
  const bool marked = topic.find(kEmptyLevel) != std::string_view::npos;
  if (!marked && !has_empty_level(topic)) return topic;  // the common case: no copy
  scratch.clear();
  bool valid = true;
  for_each_level(topic, [&](std::string_view level) {
    if (level == kEmptyLevel) valid = false;
    scratch.append(level.empty() ? kEmptyLevel : level);
    scratch.push_back('/');
  });
  scratch.pop_back();
  return valid ? std::string_view(scratch) : std::string_view();
}

std::string_view mqtt_topic(std::string_view topic, std::string& scratch) {
  if (topic.find(kEmptyLevel) == std::string_view::npos) return topic;
  scratch.clear();
  for_each_level(topic, [&](std::string_view level) {
    if (level != kEmptyLevel) scratch.append(level);
    scratch.push_back('/');
  });
  scratch.pop_back();
  return scratch;
}

size_t mqtt_topic_size(std::string_view topic) {
  if (topic.find(kEmptyLevel) == std::string_view::npos) return topic.size();
  size_t size = topic.size();
  for_each_level(topic, [&](std::string_view level) { size -= level == kEmptyLevel ? kEmptyLevel.size() : 0; });
  return size;
}

bool map_filter(std::string_view filter, const topic::Limits& limits, Patterns& out) {
  out.count = 0;
  // Literal '*' and '>' would turn into broker wildcards.
  if (filter.find_first_of("*>") != std::string_view::npos) return false;
  std::string scratch;
  filter = broker_topic(filter, scratch);
  if (filter.empty()) return false;
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
