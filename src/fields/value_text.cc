// Text forms of field values, for CLIs and logs (never the hot path).
//   int      decimal integer                  -42
//   decimal  exact, no exponent notation      101.250
//   string   as is                            Vodafone
//   bytes    lowercase hex, two digits a byte 00ff10  (add_parsed reads hex only, either case)
//   time     ISO-8601 UTC with nanoseconds    2026-11-29T19:25:48.123456789Z
//            (add_parsed also reads integer nanoseconds and "now")
#include <charconv>
#include <cstdio>
#include <vector>

#include "base/clock.h"
#include "tickwire/fields/dictionary.h"
#include "tickwire/fields/payload_text.h"

namespace tw::fields {
namespace {

constexpr uint64_t kNsPerSecond = 1'000'000'000;
constexpr int64_t kSecondsPerDay = 86'400;

struct CivilDate {
  int64_t year;
  unsigned month;  // 1..12
  unsigned day;    // 1..31
};

// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
CivilDate civil_from_days(int64_t days) {
  days += 719468;
  int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  auto doe = static_cast<unsigned>(days - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  unsigned day = doy - (153 * mp + 2) / 5 + 1;
  unsigned month = mp < 10 ? mp + 3 : mp - 9;
  return {static_cast<int64_t>(yoe) + era * 400 + (month <= 2), month, day};
}

int64_t days_from_civil(CivilDate d) {
  int64_t y = d.year - (d.month <= 2);
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  auto yoe = static_cast<unsigned>(y - era * 400);
  unsigned doy = (153 * (d.month > 2 ? d.month - 3 : d.month + 9) + 2) / 5 + d.day - 1;
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

std::string format_time(uint64_t ns) {
  auto secs = static_cast<int64_t>(ns / kNsPerSecond);
  int64_t days = secs / kSecondsPerDay;
  int64_t in_day = secs % kSecondsPerDay;
  CivilDate d = civil_from_days(days);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%09lluZ", static_cast<long long>(d.year),
                d.month, d.day, static_cast<long long>(in_day / 3600), static_cast<long long>(in_day / 60 % 60),
                static_cast<long long>(in_day % 60), static_cast<unsigned long long>(ns % kNsPerSecond));
  return buf;
}

template <typename T>
bool parse_whole(std::string_view text, T& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && !text.empty();
}

// Reads exactly `width` decimal digits at `pos`.
bool fixed_digits(std::string_view text, size_t pos, size_t width, unsigned& out) {
  return pos + width <= text.size() && parse_whole(text.substr(pos, width), out);
}

// "YYYY-MM-DDTHH:MM:SS[.fraction]Z", the form format_value writes, fraction up to 9 digits.
bool parse_iso_time(std::string_view text, uint64_t& ns) {
  unsigned year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
      text[16] != ':' || text.back() != 'Z') {
    return false;
  }
  if (!fixed_digits(text, 0, 4, year) || !fixed_digits(text, 5, 2, month) || !fixed_digits(text, 8, 2, day) ||
      !fixed_digits(text, 11, 2, hour) || !fixed_digits(text, 14, 2, minute) ||
      !fixed_digits(text, 17, 2, second)) {
    return false;
  }
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) {
    return false;
  }
  uint64_t fraction = 0;
  std::string_view rest = text.substr(19, text.size() - 20);
  if (!rest.empty()) {
    if (rest[0] != '.' || rest.size() < 2 || rest.size() > 10) return false;
    if (!parse_whole(rest.substr(1), fraction) || rest[1] == '+' || rest[1] == '-') return false;
    for (size_t i = rest.size() - 1; i < 9; ++i) fraction *= 10;
  }
  int64_t days = days_from_civil({year, month, day});
  if (civil_from_days(days).day != day) return false;  // e.g. February 30th
  auto secs = static_cast<uint64_t>(days * kSecondsPerDay + hour * 3600 + minute * 60 + second);
  if (secs > UINT64_MAX / kNsPerSecond - 1) return false;
  ns = secs * kNsPerSecond + fraction;
  return true;
}

bool parse_time(std::string_view text, uint64_t& ns) {
  if (text == "now") {
    ns = realtime_ns();
    return true;
  }
  return parse_whole(text, ns) || parse_iso_time(text, ns);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool parse_hex(std::string_view text, std::vector<uint8_t>& out) {
  if (text.size() % 2 != 0) return false;
  out.clear();
  for (size_t i = 0; i < text.size(); i += 2) {
    int hi = hex_value(text[i]);
    int lo = hex_value(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<uint8_t>(hi << 4 | lo));
  }
  return true;
}

}  // namespace

std::string format_value(const FieldValue& v) {
  switch (v.type) {
    case FieldType::Int: return std::to_string(v.i);
    case FieldType::Decimal: return v.decimal().to_string();
    case FieldType::String: return std::string(v.s);
    case FieldType::Bytes: return hex({reinterpret_cast<const uint8_t*>(v.s.data()), v.s.size()});
    case FieldType::Time: return format_time(static_cast<uint64_t>(v.i));
  }
  return "?";
}

bool add_parsed(FieldListWriter& w, const FieldDef& def, std::string_view text) {
  constexpr size_t kMaxLength = UINT16_MAX;
  switch (def.type) {
    case FieldType::Int: {
      int64_t v = 0;
      if (!parse_whole(text, v)) return false;
      w.add_int(def.id, v);
      return true;
    }
    case FieldType::Decimal: {
      Decimal d;
      if (!Decimal::parse(text, d)) return false;
      w.add_decimal(def.id, d);
      return true;
    }
    case FieldType::String:
      if (text.size() > kMaxLength) return false;
      w.add_string(def.id, text);
      return true;
    case FieldType::Bytes: {
      std::vector<uint8_t> bytes;
      if (!parse_hex(text, bytes) || bytes.size() > kMaxLength) return false;
      w.add_bytes(def.id, bytes);
      return true;
    }
    case FieldType::Time: {
      uint64_t ns = 0;
      if (!parse_time(text, ns)) return false;
      w.add_time(def.id, ns);
      return true;
    }
  }
  return false;
}

}  // namespace tw::fields
