// The pure parts of the tickwire CLI: --field parsing and the demo market.
#include <gtest/gtest.h>

#include "demo_market.h"
#include "field_args.h"

namespace tw::cli {
namespace {

const fields::Dictionary& dict() { return fields::Dictionary::builtin(); }

TEST(FieldArgs, DictionaryNameGivesIdAndType) {
  auto f = parse_field_assignment("BID=189.25", dict());
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->def.id, 22);
  EXPECT_EQ(f->def.type, fields::FieldType::Decimal);
  EXPECT_EQ(f->value, "189.25");
}

TEST(FieldArgs, NumericIdNeedsAType) {
  auto f = parse_field_assignment("4001:int=7", dict());
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->def.id, 4001);
  EXPECT_EQ(f->def.type, fields::FieldType::Int);
  EXPECT_FALSE(parse_field_assignment("4001=7", dict()).ok());
  EXPECT_FALSE(parse_field_assignment("70000:int=7", dict()).ok());
  EXPECT_FALSE(parse_field_assignment("NO_SUCH_FIELD=1", dict()).ok());
  EXPECT_FALSE(parse_field_assignment("BID", dict()).ok());
}

TEST(FieldArgs, BuildsAValidFieldList) {
  auto payload = build_field_list({"BID=1.5", "ASK=1.6", "DSPLY_NAME=Apple Inc"}, dict());
  ASSERT_TRUE(payload.ok()) << payload.error().message;
  EXPECT_TRUE(fields::validate(*payload));
  std::vector<uint16_t> ids;
  fields::for_each(*payload, [&](uint16_t id, const fields::FieldValue&) { ids.push_back(id); });
  EXPECT_EQ(ids, (std::vector<uint16_t>{22, 25, 3}));
}

TEST(FieldArgs, RejectsBadValuesAndDuplicates) {
  EXPECT_FALSE(build_field_list({"BID=abc"}, dict()).ok());
  EXPECT_FALSE(build_field_list({"BID=1", "BID=2"}, dict()).ok());
}

TEST(DemoMarket, NamesRealTickersThenGeneratedOnes) {
  auto market = DemoMarket::create(dict(), 62, 1);
  ASSERT_TRUE(market.ok()) << market.error().message;
  EXPECT_EQ(market->symbol(0), "AAPL");
  EXPECT_EQ(market->symbol(60), "SYM0001");
  EXPECT_EQ(market->symbol(61), "SYM0002");
}

TEST(DemoMarket, ImagesAndUpdatesAreValidFieldLists) {
  auto market = DemoMarket::create(dict(), 100, 7);
  ASSERT_TRUE(market.ok());
  std::array<uint8_t, 1024> buf{};
  for (size_t i = 0; i < market->size(); ++i) {
    size_t n = market->encode_image(i, buf, 1);
    ASSERT_GT(n, 0u);
    ASSERT_TRUE(fields::validate({buf.data(), n}));
  }
  for (int k = 0; k < 1000; ++k) {
    size_t symbol = 0;
    size_t n = market->next_update(buf, 2, symbol);
    ASSERT_GT(n, 0u);
    ASSERT_LT(symbol, market->size());
    ASSERT_TRUE(fields::validate({buf.data(), n}));
  }
}

TEST(DemoMarket, SameSeedSameMarket) {
  auto a = DemoMarket::create(dict(), 80, 42);
  auto b = DemoMarket::create(dict(), 80, 42);
  ASSERT_TRUE(a.ok() && b.ok());
  std::array<uint8_t, 1024> ba{}, bb{};
  for (int k = 0; k < 200; ++k) {
    size_t sa = 0, sb = 0;
    size_t na = a->next_update(ba, 5, sa);
    size_t nb = b->next_update(bb, 5, sb);
    ASSERT_EQ(sa, sb);
    ASSERT_EQ(std::vector<uint8_t>(ba.begin(), ba.begin() + na), std::vector<uint8_t>(bb.begin(), bb.begin() + nb));
  }
}

TEST(DemoMarket, TradesAccumulateVolume) {
  auto market = DemoMarket::create(dict(), 1, 3);
  ASSERT_TRUE(market.ok());
  std::array<uint8_t, 1024> buf{};
  int64_t last_acvol = -1;
  for (int k = 0; k < 500; ++k) {
    size_t symbol = 0;
    size_t n = market->next_update(buf, 9, symbol);
    fields::for_each(std::span<const uint8_t>(buf.data(), n), [&](uint16_t id, const fields::FieldValue& v) {
      if (id == 32) {  // ACVOL_1
        EXPECT_GT(v.i, last_acvol);
        last_acvol = v.i;
      }
    });
  }
  EXPECT_GT(last_acvol, 0) << "500 events on one symbol include trades";
}

}  // namespace
}  // namespace tw::cli
