#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "field_test_util.h"
#include "tickwire/fields/field_list.h"

namespace tw::fields {
namespace {

using testing::build;
using testing::RawPayload;

struct Decoded {
  FieldType type;
  int64_t i;
  int8_t exponent;
  std::string s;
};

std::map<uint16_t, Decoded> decode(const std::vector<uint8_t>& payload) {
  std::map<uint16_t, Decoded> out;
  bool ok = for_each(payload, [&](uint16_t id, const FieldValue& v) {
    out[id] = Decoded{v.type, v.i, v.exponent, std::string(v.s)};
  });
  EXPECT_TRUE(ok);
  return out;
}

const uint8_t kRawBytes[] = {0x00, 0xff, 0x10, 0x7f};

std::vector<uint8_t> one_of_each() {
  return build([](FieldListWriter& w) {
    w.add_int(1, -42);
    w.add_decimal(22, {12345, -2});
    w.add_string(3, "VOD.L");
    w.add_bytes(4, kRawBytes);
    w.add_time(18, 1'795'980'348'123'456'789ull);
  });
}

TEST(FieldList, TypeNamesRoundTrip) {
  for (auto t : {FieldType::Int, FieldType::Decimal, FieldType::String, FieldType::Bytes, FieldType::Time}) {
    FieldType back = FieldType::Int;
    ASSERT_TRUE(parse_type(type_name(t), back)) << type_name(t);
    EXPECT_EQ(back, t);
  }
  FieldType unused;
  EXPECT_FALSE(parse_type("float", unused));
  EXPECT_FALSE(parse_type("", unused));
  EXPECT_STREQ(type_name(FieldType::Decimal), "decimal");
}

TEST(FieldList, RoundTripsEveryType) {
  auto payload = one_of_each();
  ASSERT_FALSE(payload.empty());
  ASSERT_TRUE(validate(payload));
  auto fields = decode(payload);
  ASSERT_EQ(fields.size(), 5u);
  EXPECT_EQ(fields[1].type, FieldType::Int);
  EXPECT_EQ(fields[1].i, -42);
  EXPECT_EQ(fields[22].type, FieldType::Decimal);
  EXPECT_EQ(fields[22].i, 12345);
  EXPECT_EQ(fields[22].exponent, -2);
  EXPECT_EQ(fields[3].type, FieldType::String);
  EXPECT_EQ(fields[3].s, "VOD.L");
  EXPECT_EQ(fields[4].type, FieldType::Bytes);
  EXPECT_EQ(fields[4].s, std::string("\x00\xff\x10\x7f", 4));
  EXPECT_EQ(fields[18].type, FieldType::Time);
  EXPECT_EQ(static_cast<uint64_t>(fields[18].i), 1'795'980'348'123'456'789ull);
}

TEST(FieldList, ExtremeValuesRoundTrip) {
  auto payload = build([](FieldListWriter& w) {
    w.add_int(0, std::numeric_limits<int64_t>::min());
    w.add_int(65535, std::numeric_limits<int64_t>::max());
    w.add_decimal(7, {-1, -18});
    w.add_decimal(8, {1, 18});
    w.add_string(9, "");
    w.add_string(10, std::string(65535, 'x'));
    w.add_time(11, std::numeric_limits<uint64_t>::max());
  });
  ASSERT_TRUE(validate(payload));
  auto fields = decode(payload);
  EXPECT_EQ(fields[0].i, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(fields[65535].i, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(fields[7].exponent, -18);
  EXPECT_EQ(fields[8].exponent, 18);
  EXPECT_EQ(fields[9].s, "");
  EXPECT_EQ(fields[10].s.size(), 65535u);
  EXPECT_EQ(static_cast<uint64_t>(fields[11].i), std::numeric_limits<uint64_t>::max());
}

TEST(FieldList, GenericAddCopiesEachValue) {
  auto original = one_of_each();
  auto copy = build([&](FieldListWriter& w) {
    ASSERT_TRUE(for_each(original, [&](uint16_t id, const FieldValue& v) { w.add(id, v); }));
  });
  EXPECT_EQ(copy, original);
}

TEST(FieldList, EncodingIsTheDocumentedLayout) {
  auto payload = build([](FieldListWriter& w) {
    w.add_decimal(0x0016, {0x0102, -2});
    w.add_string(0x0003, "ab");
  });
  const std::vector<uint8_t> expected = {
      0x02, 0x00,                                            // count
      0x16, 0x00, 0x02, 0x02, 0x01, 0, 0, 0, 0, 0, 0, 0xfe,  // BID decimal 258e-2
      0x03, 0x00, 0x03, 0x02, 0x00, 'a', 'b',                // string "ab"
  };
  EXPECT_EQ(payload, expected);
}

TEST(FieldList, EmptyListIsValid) {
  auto payload = build([](FieldListWriter&) {});
  EXPECT_EQ(payload, (std::vector<uint8_t>{0, 0}));
  EXPECT_TRUE(validate(payload));
}

TEST(FieldList, WriterReportsOverflow) {
  uint8_t buf[16];
  FieldListWriter w(buf);
  w.add_int(1, 1);
  w.add_int(2, 2);  // 2 + 11 + 11 > 16
  EXPECT_EQ(w.finish(), 0u);

  uint8_t tiny[1];
  FieldListWriter empty(tiny);
  EXPECT_EQ(empty.finish(), 0u);

  std::vector<uint8_t> big(70000);
  FieldListWriter long_string(big);
  long_string.add_string(1, std::string(65536, 'x'));
  EXPECT_EQ(long_string.finish(), 0u);
}

TEST(FieldList, WriterFailsPastMaxCount) {
  std::vector<uint8_t> buf(2 + 65536 * 11);
  FieldListWriter w(buf);
  for (uint32_t id = 0; id <= 65535; ++id) w.add_int(static_cast<uint16_t>(id), 0);
  EXPECT_EQ(w.finish(), 0u);
}

TEST(FieldList, RejectsTruncationAtEveryByte) {
  auto payload = one_of_each();
  for (size_t len = 0; len < payload.size(); ++len) {
    std::span<const uint8_t> cut(payload.data(), len);
    EXPECT_FALSE(validate(cut)) << "length " << len;
    EXPECT_FALSE(for_each(cut, [](uint16_t, const FieldValue&) {})) << "length " << len;
  }
}

TEST(FieldList, RejectsTrailingBytes) {
  auto payload = one_of_each();
  payload.push_back(0);
  EXPECT_FALSE(validate(payload));
}

TEST(FieldList, RejectsUnknownType) {
  for (uint8_t type : {0, 6, 255}) {
    auto payload = RawPayload(1).u16(5).u8(type).i64(0).bytes();
    EXPECT_FALSE(validate(payload)) << int(type);
  }
}

TEST(FieldList, RejectsDuplicateId) {
  auto payload = build([](FieldListWriter& w) {
    w.add_int(22, 1);
    w.add_string(3, "x");
    w.add_decimal(22, {1, 0});
  });
  ASSERT_FALSE(payload.empty());
  EXPECT_FALSE(validate(payload));
}

// Short lists are checked against a list of seen ids, long ones with a
// bitset: a duplicate is found on either side of the switch, and at it.
TEST(FieldList, RejectsDuplicateIdInLongLists) {
  for (int duplicate_at : {5, 31, 32, 33, 200}) {
    auto payload = build([&](FieldListWriter& w) {
      for (int i = 0; i < 300; ++i) w.add_int(static_cast<uint16_t>(1000 + i), i);
      w.add_int(static_cast<uint16_t>(1000 + duplicate_at), 0);
    });
    ASSERT_FALSE(payload.empty());
    EXPECT_FALSE(validate(payload)) << duplicate_at;
  }
  auto distinct = build([](FieldListWriter& w) {
    for (int i = 0; i < 300; ++i) w.add_int(static_cast<uint16_t>(i * 200), i);
  });
  EXPECT_TRUE(validate(distinct));
}

TEST(FieldList, RejectsExponentOutOfRange) {
  for (int exp : {-19, 19, -128, 127}) {
    auto payload = RawPayload(1).entry(22, FieldType::Decimal).i64(1).u8(static_cast<uint8_t>(exp)).bytes();
    EXPECT_FALSE(validate(payload)) << exp;
  }
  auto ok = RawPayload(1).entry(22, FieldType::Decimal).i64(1).u8(static_cast<uint8_t>(-18)).bytes();
  EXPECT_TRUE(validate(ok));
}

TEST(FieldList, RejectsCountLargerThanEntries) {
  auto payload = RawPayload(2).entry(1, FieldType::Int).i64(5).bytes();
  EXPECT_FALSE(validate(payload));
}

TEST(FieldList, RejectsStringLengthPastEnd) {
  auto payload = RawPayload(1).entry(3, FieldType::String).u16(10).u8('a').bytes();
  EXPECT_FALSE(validate(payload));
}

TEST(FieldList, ReadEntryDecodesOneAtATime) {
  auto payload = one_of_each();
  wire::ByteReader r(payload);
  EXPECT_EQ(r.u16(), 5);
  uint16_t id = 0;
  FieldValue v;
  ASSERT_TRUE(read_entry(r, id, v));
  EXPECT_EQ(id, 1);
  EXPECT_EQ(v.i, -42);
  ASSERT_TRUE(read_entry(r, id, v));
  EXPECT_EQ(id, 22);
  EXPECT_EQ(v.decimal(), (Decimal{12345, -2}));
}

}  // namespace
}  // namespace tw::fields

namespace tw::fields {
namespace {

std::vector<uint8_t> with_string(std::string_view text, bool as_bytes = false) {
  std::vector<uint8_t> buf(256);
  FieldListWriter w(buf);
  w.add_int(1, 7);
  if (as_bytes) {
    w.add_bytes(3, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  } else {
    w.add_string(3, text);
  }
  buf.resize(w.finish());
  return buf;
}

TEST(FieldList, StringValuesMustBeUtf8BytesNeedNot) {
  EXPECT_TRUE(validate(with_string("caf\xC3\xA9")));
  EXPECT_FALSE(validate(with_string("caf\xE9")));  // Latin-1, not UTF-8
  EXPECT_EQ(why_invalid(with_string("caf\xE9")), Invalid::Utf8);
  EXPECT_EQ(why_invalid(with_string("caf\xC3\xA9")), Invalid::None);
  EXPECT_TRUE(validate(with_string("caf\xE9", true)));  // BYTES carry any bytes
  auto truncated = with_string("x");
  truncated.pop_back();
  EXPECT_EQ(why_invalid(truncated), Invalid::Malformed);
}

}  // namespace
}  // namespace tw::fields
