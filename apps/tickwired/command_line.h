// The tickwired command line: builds the broker configuration from embedded
// defaults, then the TOML file (--config), then command-line overrides, each
// layer checked as it is applied. Kept apart from main() so it can be tested
// without starting a broker.
#pragma once
#include <optional>
#include <ostream>
#include <string>

#include "config/config.h"

namespace tw::tickwired {

// Exit codes of tickwired.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntimeError = 1;  // cannot listen, cannot write the port file
inline constexpr int kExitUsage = 2;         // bad flag or bad configuration

struct Invocation {
  config::BrokerConfig config;
  std::string port_file;  // --print-port-file; empty = none
};

// Either an invocation to run, or an exit code: help and version are printed
// to `out` (exit 0), misuse and bad configuration to `err` (exit 2).
struct ParsedCommandLine {
  std::optional<Invocation> invocation;
  int exit_code = kExitOk;
};

ParsedCommandLine parse_command_line(int argc, const char* const* argv, std::ostream& out,
                                     std::ostream& err);

}  // namespace tw::tickwired
