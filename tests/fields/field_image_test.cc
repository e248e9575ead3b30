#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "field_test_util.h"
#include "tickwire/fields/field_list.h"

namespace tw::fields {
namespace {

using testing::build;
using testing::RawPayload;

std::vector<uint16_t> ids(const FieldImage& image) {
  std::vector<uint16_t> out;
  for (const auto& f : image.fields()) out.push_back(f.id);
  return out;
}

std::vector<uint8_t> encode(const FieldImage& image) {
  std::vector<uint8_t> buf(image.encoded_size());
  size_t n = image.encode(buf);
  EXPECT_EQ(n, buf.size());
  buf.resize(n);
  return buf;
}

FieldImage image_of(const std::vector<uint8_t>& payload) {
  FieldImage image;
  EXPECT_TRUE(image.replace(payload));
  return image;
}

std::vector<uint8_t> quote() {
  return build([](FieldListWriter& w) {
    w.add_decimal(25, {10110, -2});  // ASK, deliberately out of id order
    w.add_decimal(22, {10100, -2});  // BID
    w.add_string(3, "VODAFONE GROUP");
    w.add_int(30, 500);
  });
}

TEST(FieldImage, ReplaceKeepsFieldsSortedById) {
  auto image = image_of(quote());
  EXPECT_EQ(ids(image), (std::vector<uint16_t>{3, 22, 25, 30}));
  ASSERT_NE(image.find(22), nullptr);
  EXPECT_EQ(image.find(22)->view().decimal(), (Decimal{10100, -2}));
  EXPECT_EQ(image.find(3)->s, "VODAFONE GROUP");
  EXPECT_EQ(image.find(6), nullptr);
}

TEST(FieldImage, MergeOverwritesFieldByField) {
  auto image = image_of(quote());
  ASSERT_TRUE(image.merge(build([](FieldListWriter& w) {
    w.add_decimal(22, {10105, -2});
    w.add_string(3, "VOD");
  })));
  EXPECT_EQ(ids(image), (std::vector<uint16_t>{3, 22, 25, 30}));
  EXPECT_EQ(image.find(22)->view().decimal(), (Decimal{10105, -2}));
  EXPECT_EQ(image.find(25)->view().decimal(), (Decimal{10110, -2}));  // untouched
  EXPECT_EQ(image.find(3)->s, "VOD");
  EXPECT_EQ(image.find(30)->i, 500);
}

TEST(FieldImage, AlreadyCheckedPayloadsGiveTheSameImage) {
  auto update = build([](FieldListWriter& w) {
    w.add_decimal(22, {10105, -2});
    w.add_int(40, 7);
  });
  FieldImage checked = image_of(quote()), trusted;
  ASSERT_TRUE(trusted.replace(quote(), Checked::Already));
  EXPECT_EQ(encode(trusted), encode(checked));
  ASSERT_TRUE(checked.merge(update));
  ASSERT_TRUE(trusted.merge(update, Checked::Already));
  EXPECT_EQ(ids(trusted), (std::vector<uint16_t>{3, 22, 25, 30, 40}));
  EXPECT_EQ(encode(trusted), encode(checked));
}

TEST(FieldImage, MergeInsertsNewFieldsInOrder) {
  auto image = image_of(quote());
  ASSERT_TRUE(image.merge(build([](FieldListWriter& w) {
    w.add_time(1025, 99);
    w.add_int(1, 7);
    w.add_decimal(6, {1012, -1});
  })));
  EXPECT_EQ(ids(image), (std::vector<uint16_t>{1, 3, 6, 22, 25, 30, 1025}));
  EXPECT_EQ(image.find(1025)->type, FieldType::Time);
  EXPECT_EQ(image.find(1025)->i, 99);
}

TEST(FieldImage, MergeCanChangeAFieldsType) {
  auto image = image_of(quote());
  ASSERT_TRUE(image.merge(build([](FieldListWriter& w) { w.add_int(3, 12); })));
  EXPECT_EQ(image.find(3)->type, FieldType::Int);
  EXPECT_EQ(image.find(3)->i, 12);
  EXPECT_EQ(image.find(3)->s, "");
}

TEST(FieldImage, MergeIntoEmptyImageEqualsReplace) {
  FieldImage merged;
  ASSERT_TRUE(merged.merge(quote()));
  EXPECT_EQ(encode(merged), encode(image_of(quote())));
}

TEST(FieldImage, ReplaceDropsOldFields) {
  auto image = image_of(quote());
  ASSERT_TRUE(image.replace(build([](FieldListWriter& w) { w.add_int(31, 100); })));
  EXPECT_EQ(ids(image), (std::vector<uint16_t>{31}));
  image.clear();
  EXPECT_TRUE(image.fields().empty());
}

TEST(FieldImage, EncodesSortedAndDecodesBack) {
  auto image = image_of(quote());
  auto encoded = encode(image);
  ASSERT_TRUE(validate(encoded));
  std::vector<uint16_t> order;
  ASSERT_TRUE(for_each(encoded, [&](uint16_t id, const FieldValue&) { order.push_back(id); }));
  EXPECT_EQ(order, (std::vector<uint16_t>{3, 22, 25, 30}));
  EXPECT_EQ(encode(image_of(encoded)), encoded);
}

TEST(FieldImage, EncodedSizeMatchesEveryType) {
  const uint8_t raw[] = {1, 2, 3};
  auto image = image_of(build([&](FieldListWriter& w) {
    w.add_int(1, 1);
    w.add_decimal(2, {1, 0});
    w.add_string(3, "abcd");
    w.add_bytes(4, raw);
    w.add_time(5, 1);
  }));
  EXPECT_EQ(image.encoded_size(), 2u + 11 + 12 + 9 + 8 + 11);
  EXPECT_EQ(encode(image).size(), image.encoded_size());
}

TEST(FieldImage, EncodeFailsWhenOutputTooSmall) {
  auto image = image_of(quote());
  std::vector<uint8_t> buf(image.encoded_size() - 1);
  EXPECT_EQ(image.encode(buf), 0u);
}

void expect_rejected_and_unchanged(const std::vector<uint8_t>& bad, const char* what) {
  auto image = image_of(quote());
  auto before = encode(image);
  EXPECT_FALSE(image.merge(bad)) << what;
  EXPECT_EQ(encode(image), before) << what;
  EXPECT_FALSE(image.replace(bad)) << what;
  EXPECT_EQ(encode(image), before) << what;
}

TEST(FieldImage, MalformedPayloadLeavesImageUnchanged) {
  // Each bad payload starts with a valid update to BID, so a merge that applied
  // before validating would show.
  auto valid_prefix = [](uint16_t count) {
    return RawPayload(count).entry(22, FieldType::Decimal).i64(1).u8(0);
  };
  expect_rejected_and_unchanged(valid_prefix(2).entry(30, FieldType::Int).bytes(), "truncated");
  expect_rejected_and_unchanged(valid_prefix(2).entry(30, static_cast<FieldType>(9)).i64(1).bytes(),
                                "unknown type");
  expect_rejected_and_unchanged(valid_prefix(2).entry(22, FieldType::Int).i64(1).bytes(), "duplicate id");
  expect_rejected_and_unchanged(valid_prefix(2).entry(25, FieldType::Decimal).i64(1).u8(40).bytes(),
                                "bad exponent");
  expect_rejected_and_unchanged(valid_prefix(1).u8(0).bytes(), "trailing bytes");
}

TEST(FieldImage, TruncationAtEveryByteLeavesImageUnchanged) {
  auto update = build([](FieldListWriter& w) {
    w.add_decimal(22, {1, 0});
    w.add_string(3, "NEW NAME");
    w.add_int(31, 9);
  });
  for (size_t len = 0; len < update.size(); ++len) {
    expect_rejected_and_unchanged(std::vector<uint8_t>(update.begin(), update.begin() + len), "truncated");
  }
}

}  // namespace
}  // namespace tw::fields
