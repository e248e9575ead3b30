#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include "tickwire/fields/dictionary.h"

namespace tw::fields {
namespace {

TEST(Dictionary, BuiltinHasConventionalFields) {
  struct Expect {
    const char* name;
    uint16_t id;
    FieldType type;
  };
  const Expect expected[] = {
      {"PROD_PERM", 1, FieldType::Int},     {"RDNDISPLAY", 2, FieldType::Int},
      {"DSPLY_NAME", 3, FieldType::String}, {"TRDPRC_1", 6, FieldType::Decimal},
      {"TRDPRC_5", 10, FieldType::Decimal}, {"NETCHNG_1", 11, FieldType::Decimal},
      {"HIGH_1", 12, FieldType::Decimal},   {"LOW_1", 13, FieldType::Decimal},
      {"CURRENCY", 15, FieldType::String},  {"TRADE_DATE", 16, FieldType::Time},
      {"TRDTIM_1", 18, FieldType::Time},    {"OPEN_PRC", 19, FieldType::Decimal},
      {"HST_CLOSE", 21, FieldType::Decimal}, {"BID", 22, FieldType::Decimal},
      {"ASK", 25, FieldType::Decimal},      {"NEWS", 28, FieldType::String},
      {"BIDSIZE", 30, FieldType::Int},      {"ASKSIZE", 31, FieldType::Int},
      {"ACVOL_1", 32, FieldType::Int},      {"PCTCHNG", 56, FieldType::Decimal},
      {"TRDVOL_1", 178, FieldType::Int},    {"SALTIM", 379, FieldType::Time},
      {"QUOTIM", 1025, FieldType::Time},    {"SEQNUM", 1021, FieldType::Int},
  };
  const auto& dict = Dictionary::builtin();
  for (const auto& e : expected) {
    const FieldDef* by_name = dict.by_name(e.name);
    ASSERT_NE(by_name, nullptr) << e.name;
    EXPECT_EQ(by_name->id, e.id) << e.name;
    EXPECT_EQ(by_name->type, e.type) << e.name;
    const FieldDef* by_id = dict.by_id(e.id);
    ASSERT_NE(by_id, nullptr) << e.id;
    EXPECT_EQ(by_id->name, e.name);
  }
  EXPECT_EQ(dict.by_name("NO_SUCH_FIELD"), nullptr);
  EXPECT_EQ(dict.by_id(60000), nullptr);
}

TEST(Dictionary, BuiltinTableHasNoDuplicates) {
  // builtin() ignores add() failures, so a duplicate in the table would silently vanish.
  std::set<std::string> names;
  std::set<uint16_t> ids;
  for (const auto& def : Dictionary::builtin().all()) {
    EXPECT_TRUE(names.insert(def.name).second) << def.name;
    EXPECT_TRUE(ids.insert(def.id).second) << def.id;
  }
  EXPECT_GE(names.size(), 40u);
}

TEST(Dictionary, ParsesTextWithCommentsAndBlankLines) {
  auto dict = Dictionary::parse(
      "# my fields\n"
      "\n"
      "BID   22  decimal   # best bid\n"
      "\tNAME\t3\tstring\r\n"
      "RAW 60000 bytes\n"
      "   \n"
      "STAMP 65535 time\n"
      "VOL 0 int",
      "test.dict");
  ASSERT_TRUE(dict.ok()) << dict.error().message;
  EXPECT_EQ(dict->all().size(), 5u);
  EXPECT_EQ(dict->by_name("BID")->type, FieldType::Decimal);
  EXPECT_EQ(dict->by_id(3)->name, "NAME");
  EXPECT_EQ(dict->by_name("RAW")->id, 60000);
  EXPECT_EQ(dict->by_id(65535)->type, FieldType::Time);
  EXPECT_EQ(dict->by_id(0)->name, "VOL");
}

// tickwired's fields_file: it adds to the built-in dictionary, and a clash names its line.
TEST(Dictionary, AFileExtendsABaseAndAClashNamesItsLine) {
  auto dict = Dictionary::parse("SPREAD_BP 4001 decimal\n", "fields.txt", &Dictionary::builtin());
  ASSERT_TRUE(dict.ok()) << dict.error().message;
  EXPECT_EQ(dict->all().size(), Dictionary::builtin().all().size() + 1);
  EXPECT_EQ(dict->by_id(4001)->name, "SPREAD_BP");
  EXPECT_EQ(dict->by_name("BID")->id, 22);
  auto clash = Dictionary::parse("MINE 4001 int\nMY_BID 22 decimal\n", "fields.txt", &Dictionary::builtin());
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.error().message, "fields.txt:2: duplicate field id 22 ('MY_BID' and 'BID')");
  EXPECT_FALSE(Dictionary::parse("BID 4005 int\n", "fields.txt", &Dictionary::builtin()).ok()) << "a name clash";
}

TEST(Dictionary, EmptyTextIsAnEmptyDictionary) {
  auto dict = Dictionary::parse("# nothing\n\n", "empty.dict");
  ASSERT_TRUE(dict.ok());
  EXPECT_TRUE(dict->all().empty());
}

void expect_error(const char* text, const std::string& message) {
  auto dict = Dictionary::parse(text, "f.dict");
  ASSERT_FALSE(dict.ok()) << text;
  EXPECT_EQ(dict.error().message, message);
}

TEST(Dictionary, ParseErrorsNameFileAndLine) {
  expect_error("BID 22 decimal\nASK 25\n", "f.dict:2: expected NAME ID TYPE");
  expect_error("\n\nBID 22 decimal extra\n", "f.dict:3: expected NAME ID TYPE");
  expect_error("BID 65536 decimal\n", "f.dict:1: bad field id '65536' (0..65535)");
  expect_error("BID -1 decimal\n", "f.dict:1: bad field id '-1' (0..65535)");
  expect_error("BID 2x decimal\n", "f.dict:1: bad field id '2x' (0..65535)");
  expect_error("# c\nBID 22 float\n", "f.dict:2: unknown type 'float' (int, decimal, string, bytes, time)");
  expect_error("B-ID 22 decimal\n", "f.dict:1: bad field name 'B-ID' (letters, digits, _)");
  expect_error("BID 22 decimal\nBID 23 decimal\n", "f.dict:2: duplicate field name 'BID'");
  expect_error("BID 22 decimal\n\nASK 22 decimal\n", "f.dict:3: duplicate field id 22 ('ASK' and 'BID')");
}

TEST(Dictionary, AddRejectsDuplicates) {
  Dictionary dict;
  EXPECT_TRUE(dict.add({"BID", 22, FieldType::Decimal}).ok());
  EXPECT_FALSE(dict.add({"BID", 23, FieldType::Decimal}).ok());
  EXPECT_FALSE(dict.add({"OTHER", 22, FieldType::Int}).ok());
  EXPECT_TRUE(dict.add({"ASK", 25, FieldType::Decimal}).ok());
  EXPECT_EQ(dict.all().size(), 2u);
  EXPECT_EQ(dict.by_id(25)->name, "ASK");
}

TEST(Dictionary, CopiedDictionaryLooksUpIndependently) {
  Dictionary copy = Dictionary::builtin();
  ASSERT_TRUE(copy.add({"MY_FIELD", 40000, FieldType::String}).ok());
  EXPECT_EQ(copy.by_name("BID")->id, 22);
  EXPECT_EQ(Dictionary::builtin().by_name("MY_FIELD"), nullptr);
}

TEST(Dictionary, LoadsFromFile) {
  std::string path = ::testing::TempDir() + "fields_dictionary_test.dict";
  {
    std::ofstream out(path);
    out << "BID 22 decimal\nASK 25 oops\n";
  }
  auto bad = Dictionary::load(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, path + ":2: unknown type 'oops' (int, decimal, string, bytes, time)");
  {
    std::ofstream out(path);
    out << "BID 22 decimal\nASK 25 decimal\n";
  }
  auto good = Dictionary::load(path);
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ(good->by_name("ASK")->id, 25);
  std::remove(path.c_str());

  auto missing = Dictionary::load(path + ".missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find(path + ".missing"), std::string::npos);
}

}  // namespace
}  // namespace tw::fields
