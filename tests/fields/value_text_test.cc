#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/clock.h"
#include "tickwire/fields/dictionary.h"

namespace tw::fields {
namespace {

// Parses `text` into a one-field list and returns the decoded value's text form.
struct Parsed {
  bool ok = false;
  FieldValue value;
  std::vector<uint8_t> storage;  // value.s points here
};

Parsed parse_one(const FieldDef& def, std::string_view text) {
  Parsed p;
  p.storage.resize(70000);
  FieldListWriter w(p.storage);
  if (!add_parsed(w, def, text)) return p;
  p.storage.resize(w.finish());
  p.ok = for_each(p.storage, [&](uint16_t id, const FieldValue& v) {
    EXPECT_EQ(id, def.id);
    p.value = v;
  });
  return p;
}

const FieldDef kInt{"ACVOL_1", 32, FieldType::Int};
const FieldDef kDecimal{"BID", 22, FieldType::Decimal};
const FieldDef kString{"DSPLY_NAME", 3, FieldType::String};
const FieldDef kBytes{"RAW", 4, FieldType::Bytes};
const FieldDef kTime{"QUOTIM", 1025, FieldType::Time};

TEST(FormatValue, EachType) {
  EXPECT_EQ(format_value({FieldType::Int, -42, 0, {}}), "-42");
  EXPECT_EQ(format_value({FieldType::Decimal, 10150, -2, {}}), "101.50");
  EXPECT_EQ(format_value({FieldType::String, 0, 0, "VOD.L"}), "VOD.L");
  EXPECT_EQ(format_value({FieldType::Bytes, 0, 0, std::string_view("\x00\xab\x10", 3)}), "00ab10");
  EXPECT_EQ(format_value({FieldType::Bytes, 0, 0, ""}), "");
}

TEST(FormatValue, TimeIsIsoUtcWithNanoseconds) {
  auto time = [](uint64_t ns) { return format_value({FieldType::Time, static_cast<int64_t>(ns), 0, {}}); };
  EXPECT_EQ(time(0), "1970-01-01T00:00:00.000000000Z");
  EXPECT_EQ(time(1'795'980'348'123'456'789ull), "2026-11-29T19:25:48.123456789Z");
  EXPECT_EQ(time(951'782'400'000'000'001ull), "2000-02-29T00:00:00.000000001Z");  // leap day
  EXPECT_EQ(time(18'446'744'073'709'551'615ull), "2554-07-21T23:34:33.709551615Z");
}

TEST(AddParsed, Int) {
  auto p = parse_one(kInt, "-9223372036854775808");
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.value.type, FieldType::Int);
  EXPECT_EQ(p.value.i, INT64_MIN);
  for (const char* bad : {"", "1.5", "abc", "12x", "9223372036854775808", " 1"}) {
    EXPECT_FALSE(parse_one(kInt, bad).ok) << bad;
  }
}

TEST(AddParsed, Decimal) {
  auto p = parse_one(kDecimal, "101.50");
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.value.decimal(), (Decimal{10150, -2}));
  EXPECT_EQ(format_value(p.value), "101.50");
  EXPECT_FALSE(parse_one(kDecimal, "1.2.3").ok);
}

TEST(AddParsed, StringIsTakenAsIs) {
  auto p = parse_one(kString, " Vodafone, 1.5 # not a comment ");
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.value.s, " Vodafone, 1.5 # not a comment ");
  EXPECT_TRUE(parse_one(kString, "").ok);
  EXPECT_FALSE(parse_one(kString, std::string(65536, 'x')).ok);
}

TEST(AddParsed, BytesAreHex) {
  auto p = parse_one(kBytes, "00aBff10");
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.value.s, std::string_view("\x00\xab\xff\x10", 4));
  EXPECT_EQ(format_value(p.value), "00abff10");
  for (const char* bad : {"0", "0g", "hello", "0x00"}) EXPECT_FALSE(parse_one(kBytes, bad).ok) << bad;
}

TEST(AddParsed, TimeAcceptsNanosecondsIsoAndNow) {
  auto ns = parse_one(kTime, "1795980348123456789");
  ASSERT_TRUE(ns.ok);
  EXPECT_EQ(format_value(ns.value), "2026-11-29T19:25:48.123456789Z");

  auto iso = parse_one(kTime, "2026-11-29T19:25:48.123456789Z");
  ASSERT_TRUE(iso.ok);
  EXPECT_EQ(static_cast<uint64_t>(iso.value.i), 1'795'980'348'123'456'789ull);
  auto short_fraction = parse_one(kTime, "2026-11-29T19:25:48.5Z");
  ASSERT_TRUE(short_fraction.ok);
  EXPECT_EQ(static_cast<uint64_t>(short_fraction.value.i), 1'795'980'348'500'000'000ull);
  auto whole_seconds = parse_one(kTime, "1970-01-01T00:00:01Z");
  ASSERT_TRUE(whole_seconds.ok);
  EXPECT_EQ(whole_seconds.value.i, 1'000'000'000);

  uint64_t before = realtime_ns();
  auto now = parse_one(kTime, "now");
  uint64_t after = realtime_ns();
  ASSERT_TRUE(now.ok);
  EXPECT_GE(static_cast<uint64_t>(now.value.i), before);
  EXPECT_LE(static_cast<uint64_t>(now.value.i), after);

  for (const char* bad : {"", "-1", "yesterday", "2026-02-30T00:00:00Z", "2026-11-29 19:25:48Z",
                          "2026-11-29T19:25:48", "2026-11-29T24:00:00Z", "2026-11-29T19:25:48.1234567891Z",
                          "2026-11-29T19:25:48.Z", "2026-11-29T19:25:48.-1Z", "1969-12-31T23:59:59Z"}) {
    EXPECT_FALSE(parse_one(kTime, bad).ok) << bad;
  }
}

TEST(AddParsed, FormatThenParseRoundTripsEveryType) {
  const char* texts[][2] = {{"int", "123"}, {"decimal", "-0.0005"}, {"string", "abc"},
                            {"bytes", "0102ff"}, {"time", "2001-09-09T01:46:40.000000007Z"}};
  for (auto& [type_text, text] : texts) {
    FieldDef def{"F", 9, FieldType::Int};
    ASSERT_TRUE(parse_type(type_text, def.type));
    auto p = parse_one(def, text);
    ASSERT_TRUE(p.ok) << text;
    EXPECT_EQ(format_value(p.value), text);
  }
}

}  // namespace
}  // namespace tw::fields
