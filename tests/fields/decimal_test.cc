#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "tickwire/fields/field_list.h"

namespace tw::fields {
namespace {

struct ParseCase {
  const char* text;
  int64_t mantissa;
  int exponent;
};

TEST(Decimal, ParsesTable) {
  const ParseCase cases[] = {
      {"123.45", 12345, -2},
      {"-0.0005", -5, -4},
      {"7", 7, 0},
      {"1e3", 1, 3},
      {"1.5E-2", 15, -3},
      {"+2.50", 250, -2},  // trailing zeros keep their precision
      {"0", 0, 0},
      {"-0", 0, 0},
      {".5", 5, -1},
      {"5.", 5, 0},
      {"000123", 123, 0},
      {"9223372036854775807", std::numeric_limits<int64_t>::max(), 0},
      {"-9223372036854775808", std::numeric_limits<int64_t>::min(), 0},
      {"1.000000000000000000000", 1, 0},  // too many zeros for the mantissa: dropped
      {"100000000000000000000", 100, 18},
      {"1e20", 100, 18},
      {"1000e-21", 1, -18},
      {"0.000000000000000001", 1, -18},
      {"0e-40", 0, -18},
      {"1E+2", 1, 2},
  };
  for (const auto& c : cases) {
    Decimal d;
    ASSERT_TRUE(Decimal::parse(c.text, d)) << c.text;
    EXPECT_EQ(d.mantissa, c.mantissa) << c.text;
    EXPECT_EQ(d.exponent, c.exponent) << c.text;
  }
}

TEST(Decimal, RejectsGarbageAndOverflow) {
  const char* bad[] = {"",     "-",    "+",    ".",     "abc",  "1.2.3", "1e",   "1e+",  "e5",
                       "1x",   " 1",   "1 ",   "--1",   "1,5",  "0x10",  "nan",  "inf",  "1e3.5",
                       "9223372036854775808", "-9223372036854775809", "0.0000000000000000001", "1e1000",
                       "1e-1000", "12345678901234567890.5"};
  for (const char* text : bad) {
    Decimal d{42, 1};
    EXPECT_FALSE(Decimal::parse(text, d)) << text;
  }
}

TEST(Decimal, FormatsExactly) {
  struct Case {
    Decimal d;
    const char* text;
  };
  const Case cases[] = {
      {{12345, -2}, "123.45"},
      {{-5, -4}, "-0.0005"},
      {{7, 0}, "7"},
      {{1, 3}, "1000"},
      {{15, -3}, "0.015"},
      {{250, -2}, "2.50"},
      {{0, 0}, "0"},
      {{0, 5}, "0"},
      {{0, -2}, "0.00"},
      {{-12, -2}, "-0.12"},
      {{-120, -2}, "-1.20"},
      {{std::numeric_limits<int64_t>::min(), 0}, "-9223372036854775808"},
      {{std::numeric_limits<int64_t>::min(), -18}, "-9.223372036854775808"},
      {{1, -18}, "0.000000000000000001"},
      {{9, 18}, "9000000000000000000"},
  };
  for (const auto& c : cases) EXPECT_EQ(c.d.to_string(), c.text);
}

TEST(Decimal, FormatThenParseIsIdentityForNonPositiveExponents) {
  const Decimal values[] = {{12345, -2}, {-5, -4}, {1, -18}, {-1, 0}, {std::numeric_limits<int64_t>::max(), -7},
                            {std::numeric_limits<int64_t>::min(), -18}, {100, 0}, {100, -2}};
  for (const auto& v : values) {
    Decimal back;
    ASSERT_TRUE(Decimal::parse(v.to_string(), back)) << v.to_string();
    EXPECT_EQ(back, v) << v.to_string();
  }
}

TEST(Decimal, PositiveExponentsRoundTripByValue) {
  // Written without exponent notation, 1e18 comes back as an integer mantissa.
  Decimal back;
  ASSERT_TRUE(Decimal::parse((Decimal{-1, 18}).to_string(), back));
  EXPECT_EQ(back, (Decimal{-1'000'000'000'000'000'000, 0}));
  ASSERT_TRUE(Decimal::parse((Decimal{25, 2}).to_string(), back));
  EXPECT_EQ(back, (Decimal{2500, 0}));
}

TEST(Decimal, ToDouble) {
  EXPECT_DOUBLE_EQ((Decimal{12345, -2}.to_double()), 123.45);
  EXPECT_DOUBLE_EQ((Decimal{-5, -4}.to_double()), -0.0005);
  EXPECT_DOUBLE_EQ((Decimal{3, 2}.to_double()), 300.0);
  EXPECT_DOUBLE_EQ((Decimal{0, 0}.to_double()), 0.0);
}

}  // namespace
}  // namespace tw::fields
