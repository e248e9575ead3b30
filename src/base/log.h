// Leveled logging to stderr. Not for the hot path: a log line is a syscall.
#pragma once
#include <cstdarg>
#include <string_view>

namespace tw::log {

enum class Level { Debug = 0, Info = 1, Warn = 2, Error = 3, Off = 4 };

void set_level(Level level);
Level level();
// Parses "debug", "info", "warn", "error", "off"; false if unknown.
bool parse_level(std::string_view text, Level& out);

void write(Level level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace tw::log

#define TW_LOG(lvl, ...)                                               \
  do {                                                                 \
    if (::tw::log::Level::lvl >= ::tw::log::level()) ::tw::log::write(::tw::log::Level::lvl, __VA_ARGS__); \
  } while (0)
#define TW_DEBUG(...) TW_LOG(Debug, __VA_ARGS__)
#define TW_INFO(...) TW_LOG(Info, __VA_ARGS__)
#define TW_WARN(...) TW_LOG(Warn, __VA_ARGS__)
#define TW_ERROR(...) TW_LOG(Error, __VA_ARGS__)
