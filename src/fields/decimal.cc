// Exact decimal text conversion. Prices travel as mantissa * 10^exponent so a
// quote of 101.10 stays 101.10 end to end; doubles appear only for display.
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tickwire/fields/field_list.h"

namespace tw::fields {
namespace {

constexpr int kMinExponent = -18;
constexpr int kMaxExponent = 18;
// Any exponent text beyond this is far outside the range a mantissa can absorb.
constexpr int kExponentTextLimit = 1000;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The pieces of "[-+]digits[.digits][(e|E)[-+]digits]" before any arithmetic.
struct DecimalText {
  bool negative = false;
  std::string_view int_digits;
  std::string_view frac_digits;
  int exponent = 0;
};

std::string_view take_digits(std::string_view& text) {
  size_t n = 0;
  while (n < text.size() && is_digit(text[n])) ++n;
  auto digits = text.substr(0, n);
  text.remove_prefix(n);
  return digits;
}

bool split_decimal_text(std::string_view text, DecimalText& out) {
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    out.negative = text[0] == '-';
    text.remove_prefix(1);
  }
  out.int_digits = take_digits(text);
  if (!text.empty() && text[0] == '.') {
    text.remove_prefix(1);
    out.frac_digits = take_digits(text);
  }
  if (out.int_digits.empty() && out.frac_digits.empty()) return false;
  if (!text.empty() && (text[0] == 'e' || text[0] == 'E')) {
    text.remove_prefix(1);
    bool exp_negative = false;
    if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
      exp_negative = text[0] == '-';
      text.remove_prefix(1);
    }
    auto exp_digits = take_digits(text);
    if (exp_digits.empty()) return false;
    int exp = 0;
    for (char c : exp_digits) {
      exp = exp * 10 + (c - '0');
      if (exp > kExponentTextLimit) exp = kExponentTextLimit;
    }
    out.exponent = exp_negative ? -exp : exp;
  }
  return text.empty();
}

// Accumulates digits into a magnitude; false if it exceeds `limit`.
bool accumulate(std::string_view digits, uint64_t limit, uint64_t& magnitude) {
  for (char c : digits) {
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (magnitude > (limit - d) / 10) return false;
    magnitude = magnitude * 10 + d;
  }
  return true;
}

// Digits of int then frac, as one sequence, less its last `drop` digits.
bool accumulate_all(std::string_view int_digits, std::string_view frac_digits, size_t drop,
                    uint64_t limit, uint64_t& magnitude) {
  size_t frac_drop = drop < frac_digits.size() ? drop : frac_digits.size();
  frac_digits.remove_suffix(frac_drop);
  int_digits.remove_suffix(drop - frac_drop);
  return accumulate(int_digits, limit, magnitude) && accumulate(frac_digits, limit, magnitude);
}

// Trailing zeros of the digit sequence int then frac.
size_t trailing_zeros(std::string_view int_digits, std::string_view frac_digits) {
  auto count = [](std::string_view digits) {
    size_t n = 0;
    while (n < digits.size() && digits[digits.size() - 1 - n] == '0') ++n;
    return n;
  };
  size_t zeros = count(frac_digits);
  return zeros < frac_digits.size() ? zeros : zeros + count(int_digits);
}

}  // namespace

bool Decimal::parse(std::string_view text, Decimal& out) {
  DecimalText parts;
  if (!split_decimal_text(text, parts)) return false;
  // Leading zeros carry no value; trailing fractional zeros carry precision
  // ("1.50"), kept unless the mantissa cannot hold them.
  while (!parts.int_digits.empty() && parts.int_digits[0] == '0') parts.int_digits.remove_prefix(1);
  int exponent = parts.exponent - static_cast<int>(parts.frac_digits.size());
  uint64_t limit = parts.negative ? (uint64_t{1} << 63) : (uint64_t{1} << 63) - 1;
  uint64_t magnitude = 0;
  if (!accumulate_all(parts.int_digits, parts.frac_digits, 0, limit, magnitude)) {
    size_t zeros = trailing_zeros(parts.int_digits, parts.frac_digits);
    magnitude = 0;
    if (!accumulate_all(parts.int_digits, parts.frac_digits, zeros, limit, magnitude)) return false;
    exponent += static_cast<int>(zeros);
  }
  if (magnitude == 0) {
    exponent = exponent < kMinExponent ? kMinExponent : exponent > kMaxExponent ? kMaxExponent : exponent;
  }
  while (exponent > kMaxExponent) {
    if (magnitude > limit / 10) return false;
    magnitude *= 10;
    --exponent;
  }
  while (exponent < kMinExponent) {
    if (magnitude % 10 != 0) return false;
    magnitude /= 10;
    ++exponent;
  }
  out.mantissa = parts.negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  out.exponent = static_cast<int8_t>(exponent);
  return true;
}

std::string Decimal::to_string() const {
  uint64_t magnitude = mantissa < 0 ? 0 - static_cast<uint64_t>(mantissa) : static_cast<uint64_t>(mantissa);
  std::array<char, 24> buf{};
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), magnitude);
  (void)ec;  // 24 chars always hold a u64
  std::string digits(buf.data(), end);
  std::string out = mantissa < 0 ? "-" : "";
  if (exponent >= 0) {
    out += digits;
    if (magnitude != 0) out.append(static_cast<size_t>(exponent), '0');
    return out;
  }
  size_t frac = static_cast<size_t>(-exponent);
  if (digits.size() <= frac) digits.insert(0, frac + 1 - digits.size(), '0');
  out.append(digits, 0, digits.size() - frac);
  out += '.';
  out.append(digits, digits.size() - frac, frac);
  return out;
}

double Decimal::to_double() const {
  static constexpr std::array<double, 19> kPow10 = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,
                                                    1e7,  1e8,  1e9,  1e10, 1e11, 1e12, 1e13,
                                                    1e14, 1e15, 1e16, 1e17, 1e18};
  double m = static_cast<double>(mantissa);
  int e = exponent;
  if (e > kMaxExponent) e = kMaxExponent;
  if (e < kMinExponent) e = kMinExponent;
  // Dividing by an exact power of ten rounds once; multiplying by 1e-n would round twice.
  return e >= 0 ? m * kPow10[static_cast<size_t>(e)] : m / kPow10[static_cast<size_t>(-e)];
}

}  // namespace tw::fields
