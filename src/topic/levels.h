// Level splitting shared by topic.cc and the index tries. Works on string_views so
// that matching a topic on the hot path never allocates.
#pragma once
#include <string_view>

namespace tw::topic {

inline constexpr std::string_view kStar = "*";     // exactly one level
inline constexpr std::string_view kGreater = ">";  // one or more trailing levels

struct LevelSplit {
  std::string_view level;  // the first level
  std::string_view rest;   // what follows its '/', empty when it was the last level
};

// For a valid topic or pattern an empty `rest` means "no more levels": valid inputs
// never hold an empty level, so "A/" cannot be confused with "A".
constexpr LevelSplit split_first_level(std::string_view path) {
  const size_t slash = path.find('/');
  if (slash == std::string_view::npos) return {path, {}};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

}  // namespace tw::topic
