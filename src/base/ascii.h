// ASCII case for protocol tokens (HTTP media types and origins, users-file
// prefixes, DNS names): the letters A-Z only, never the locale's.
#pragma once
#include <algorithm>
#include <string>
#include <string_view>

namespace tw::ascii {

inline char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

inline std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = lower(c);
  return out;
}

inline bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

}  // namespace tw::ascii
