#include "base/log.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>

#include "base/unicode.h"

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

// Client text (names, client ids, topics, user names) reaches log lines
// through the format's arguments: the whole message is escaped here, once, so
// that no call site can forget to and no client can end a line, forge the
// next one or drive the reader's terminal (base/unicode.h, escape()).
void write(Level level, const char* fmt, ...) {
  char message[1024];
  va_list args;
  va_start(args, fmt);
  const int length = std::vsnprintf(message, sizeof message, fmt, args);
  va_end(args);
  std::string_view text(message, length < 0 ? 0 : std::min<size_t>(static_cast<size_t>(length), sizeof message - 1));
  std::string escaped;
  if (unicode::needs_escape(text)) {
    escaped = unicode::escape(text);
    text = escaped;
  }
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm utc{};
  gmtime_r(&ts.tv_sec, &utc);
  char line[1280];
  int n = std::snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s %.*s",
                        utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                        ts.tv_nsec / 1000000, name_of(level), static_cast<int>(text.size()), text.data());
  if (n > static_cast<int>(sizeof line) - 2) n = sizeof line - 2;
  line[n++] = '\n';
  std::fwrite(line, 1, n, stderr);
}

}  // namespace tw::log
