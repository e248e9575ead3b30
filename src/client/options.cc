#include "tickwire/client/options.h"

#include <charconv>
#include <cstdlib>
#include <fstream>

namespace tw::client {

bool parse_server_address(std::string_view text, std::string& host, uint16_t& port) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  std::string_view h = text.substr(0, colon);
  std::string_view p = text.substr(colon + 1);
  if (h.front() == '[') {
    if (h.size() < 3 || h.back() != ']') return false;
    h = h.substr(1, h.size() - 2);
  } else if (h.find(':') != std::string_view::npos) {
    return false;  // a bare IPv6 address is ambiguous without brackets
  }
  unsigned value = 0;
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
  if (p.empty() || ec != std::errc{} || end != p.data() + p.size() || value == 0 || value > 65535) return false;
  host.assign(h);
  port = static_cast<uint16_t>(value);
  return true;
}

Status parse_server_list(std::string_view text, Options& options) {
  options.failover.clear();
  bool first = true;
  while (true) {
    const size_t comma = text.find(',');
    const std::string_view one = text.substr(0, comma);
    std::string host;
    uint16_t port = 0;
    if (!parse_server_address(one, host, port)) {
      return Error{"invalid server address '" + std::string(one) + "' (expected HOST:PORT[,HOST:PORT...])"};
    }
    if (first) {
      options.host = std::move(host);
      options.port = port;
      first = false;
    } else {
      options.failover.emplace_back(one);
    }
    if (comma == std::string_view::npos) return Ok{};
    text.remove_prefix(comma + 1);
  }
}

std::string resolve_server(std::string_view flag) {
  if (!flag.empty()) return std::string(flag);
  const char* env = std::getenv(std::string(kServerEnvVar).c_str());
  if (env != nullptr && *env != '\0') return env;
  return std::string(kDefaultServer);
}

Result<std::string> resolve_password(const std::string& file) {
  if (file.empty()) {
    const char* env = std::getenv(std::string(kPasswordEnvVar).c_str());
    if (env == nullptr) return Error{"a user needs a password: --password-file FILE or $TICKWIRE_PASSWORD"};
    return std::string(env);
  }
  std::ifstream in(file);
  if (!in) return Error{"cannot read the password file " + file};
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

}  // namespace tw::client
