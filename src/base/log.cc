#include "base/log.h"

#include <cstdio>
#include <ctime>

namespace tw::log {
namespace {
Level g_level = Level::Info;
const char* name_of(Level level) {
  switch (level) {
    case Level::Debug: return "DEBUG";
    case Level::Info: return "INFO";
    case Level::Warn: return "WARN";
    case Level::Error: return "ERROR";
    case Level::Off: break;
  }
  return "";
}
}  // namespace

void set_level(Level level) { g_level = level; }
Level level() { return g_level; }

bool parse_level(std::string_view text, Level& out) {
  static constexpr std::pair<std::string_view, Level> kNames[] = {
      {"debug", Level::Debug}, {"info", Level::Info}, {"warn", Level::Warn},
      {"error", Level::Error}, {"off", Level::Off}};
  for (const auto& [name, value] : kNames) {
    if (name == text) {
      out = value;
      return true;
    }
  }
  return false;
}

void write(Level level, const char* fmt, ...) {
  char line[1024];
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm utc{};
  gmtime_r(&ts.tv_sec, &utc);
  int n = std::snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s ",
                        utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min,
                        utc.tm_sec, ts.tv_nsec / 1000000, name_of(level));
  va_list args;
  va_start(args, fmt);
  n += std::vsnprintf(line + n, sizeof line - n - 1, fmt, args);
  va_end(args);
  if (n > static_cast<int>(sizeof line) - 2) n = sizeof line - 2;
  line[n++] = '\n';
  std::fwrite(line, 1, n, stderr);
}

}  // namespace tw::log
