// tickwire passwd: prints an argon2id hash for a users file (docs/security.md).
// The password comes from --password-file or standard input (not echoed on a
// terminal); it is never printed.
#include <termios.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "auth/password.h"
#include "common.h"

namespace tw::cli {

namespace {

std::string read_line_quietly() {
  termios saved{};
  const bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
  if (tty) {
    std::fprintf(stderr, "password: ");
    termios quiet = saved;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    tcsetattr(STDIN_FILENO, TCSANOW, &quiet);
  }
  std::string line;
  std::getline(std::cin, line);
  if (tty) {
    tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    std::fprintf(stderr, "\n");
  }
  return line;
}

}  // namespace

void add_passwd_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("passwd", "print an argon2id hash of a password, for a users file");
  static std::string file;
  static auth::HashCost cost;
  cmd->add_option("--password-file", file, "read the password from this file's first line (default: stdin)");
  cmd->add_option("--time-cost", cost.time, "argon2id passes (default 3)")->check(CLI::Range(1u, 100u));
  cmd->add_option("--memory-kib", cost.memory_kib, "argon2id memory in KiB (default 65536)")
      ->check(CLI::Range(8u, 4u << 20));
  cmd->callback([&exit_code] {
    std::string password;
    if (file.empty()) {
      password = read_line_quietly();
    } else {
      auto read = client::resolve_password(file);
      if (!read) {
        std::fprintf(stderr, "tickwire: %s\n", read.error().message.c_str());
        exit_code = kExitError;
        return;
      }
      password = *read;
    }
    if (password.empty()) {
      std::fprintf(stderr, "tickwire: empty password\n");
      exit_code = kExitError;
      return;
    }
    auto hash = auth::hash_password(password, cost);
    if (!hash) {
      std::fprintf(stderr, "tickwire: %s\n", hash.error().message.c_str());
      exit_code = kExitError;
      return;
    }
    std::printf("%s\n", hash->c_str());
  });
}

}  // namespace tw::cli
