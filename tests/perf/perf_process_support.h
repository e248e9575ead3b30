// Helpers for the process tests of `tickwire perf pub/sub`: run them as real
// child processes and read their JSON lines.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "testlib/process.h"

namespace tw::perf::testing {

// argv for `tickwire perf <role> ... --server 127.0.0.1:PORT`.
inline std::vector<std::string> perf_args(const std::string& role, uint16_t port, std::vector<std::string> args) {
  std::vector<std::string> all = {"perf", role};
  all.insert(all.end(), args.begin(), args.end());
  all.push_back("--server");
  all.push_back("127.0.0.1:" + std::to_string(port));
  return all;
}

// Every line of `out` that parses as a JSON object.
inline std::vector<nlohmann::json> json_lines(const std::string& out) {
  std::vector<nlohmann::json> lines;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    auto j = nlohmann::json::parse(out.substr(start, end - start), nullptr, false);
    if (j.is_object()) lines.push_back(j);
    start = end + 1;
  }
  return lines;
}

// The line with "type" == type (the last one), or null.
inline nlohmann::json line_of_type(const std::vector<nlohmann::json>& lines, const std::string& type) {
  nlohmann::json found;
  for (const auto& j : lines)
    if (j.value("type", "") == type) found = j;
  return found;
}

inline size_t count_of_type(const std::vector<nlohmann::json>& lines, const std::string& type) {
  size_t n = 0;
  for (const auto& j : lines) n += j.value("type", "") == type;
  return n;
}

// Starts `perf sub` and waits for its ready line (subscription in place).
inline bool wait_ready(tw::testing::Process& sub) { return sub.wait_for_out("\"type\":\"ready\"", 10000); }

}  // namespace tw::perf::testing
