#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "topic/index.h"

namespace tw::topic {
namespace {

std::vector<int> matched(const PatternIndex<int>& index, std::string_view topic) {
  std::vector<int> values;
  index.match(topic, [&](const int& value) { values.push_back(value); });
  std::sort(values.begin(), values.end());
  return values;
}

using Ints = std::vector<int>;

TEST(PatternIndex, EmptyIndexMatchesNothing) {
  PatternIndex<int> index;
  EXPECT_EQ(index.size(), 0u);
  EXPECT_TRUE(index.empty());
  EXPECT_EQ(matched(index, "A/B"), Ints{});
  EXPECT_EQ(index.node_count(), 1u);
}

TEST(PatternIndex, MatchesLiteralStarAndGreater) {
  PatternIndex<int> index;
  index.insert("NYSE/EQ/IBM", 1);
  index.insert("NYSE/*/IBM", 2);
  index.insert("NYSE/>", 3);
  index.insert("*/EQ/>", 4);
  index.insert(">", 5);
  index.insert("*", 6);
  index.insert("NYSE/EQ", 7);
  index.insert("NYSE/EQ/IBM/>", 8);
  EXPECT_EQ(index.size(), 8u);
  EXPECT_EQ(matched(index, "NYSE/EQ/IBM"), (Ints{1, 2, 3, 4, 5}));
  EXPECT_EQ(matched(index, "NYSE/FX/IBM"), (Ints{2, 3, 5}));
  EXPECT_EQ(matched(index, "NYSE/EQ"), (Ints{3, 5, 7}));
  EXPECT_EQ(matched(index, "NYSE"), (Ints{5, 6}));
  EXPECT_EQ(matched(index, "LSE/EQ/VOD"), (Ints{4, 5}));
  EXPECT_EQ(matched(index, "NYSE/EQ/IBM/BID"), (Ints{3, 4, 5, 8}));
}

TEST(PatternIndex, GreaterNeedsAtLeastOneLevel) {
  PatternIndex<int> index;
  index.insert("A/>", 1);
  EXPECT_EQ(matched(index, "A"), Ints{});
  EXPECT_EQ(matched(index, "A/B"), Ints{1});
  EXPECT_EQ(matched(index, "A/B/C"), Ints{1});
}

TEST(PatternIndex, StarMatchesExactlyOneLevel) {
  PatternIndex<int> index;
  index.insert("*/*", 1);
  EXPECT_EQ(matched(index, "A"), Ints{});
  EXPECT_EQ(matched(index, "A/B"), Ints{1});
  EXPECT_EQ(matched(index, "A/B/C"), Ints{});
}

TEST(PatternIndex, DuplicatesAreStoredAndErasedOneAtATime) {
  PatternIndex<int> index;
  index.insert("A/*", 7);
  index.insert("A/*", 7);
  index.insert("A/*", 8);
  EXPECT_EQ(index.size(), 3u);
  EXPECT_EQ(matched(index, "A/B"), (Ints{7, 7, 8}));
  EXPECT_TRUE(index.erase("A/*", 7));
  EXPECT_EQ(matched(index, "A/B"), (Ints{7, 8}));
  EXPECT_TRUE(index.erase("A/*", 7));
  EXPECT_FALSE(index.erase("A/*", 7));
  EXPECT_EQ(matched(index, "A/B"), Ints{8});
  EXPECT_EQ(index.size(), 1u);
}

TEST(PatternIndex, EraseOfAbsentEntryChangesNothing) {
  PatternIndex<int> index;
  index.insert("A/B", 1);
  const size_t nodes = index.node_count();
  EXPECT_FALSE(index.erase("A/B", 2));
  EXPECT_FALSE(index.erase("A/C", 1));
  EXPECT_FALSE(index.erase("A", 1));
  EXPECT_FALSE(index.erase("A/B/C", 1));
  EXPECT_FALSE(index.erase("A/*", 1));
  EXPECT_FALSE(index.erase("A/>", 1));
  EXPECT_FALSE(index.erase(">", 1));
  EXPECT_EQ(index.size(), 1u);
  EXPECT_EQ(index.node_count(), nodes);
  EXPECT_EQ(matched(index, "A/B"), Ints{1});
}

TEST(PatternIndex, EraseKeepsOtherPatternsOnTheSamePath) {
  PatternIndex<int> index;
  index.insert("A", 1);
  index.insert("A/B", 2);
  index.insert("A/>", 3);
  EXPECT_TRUE(index.erase("A/B", 2));
  EXPECT_EQ(matched(index, "A"), Ints{1});
  EXPECT_EQ(matched(index, "A/B"), Ints{3});
  EXPECT_TRUE(index.erase("A", 1));
  EXPECT_EQ(matched(index, "A"), Ints{});
  EXPECT_EQ(matched(index, "A/X"), Ints{3});
}

TEST(PatternIndex, EmptiedNodesArePruned) {
  PatternIndex<int> index;
  index.insert("A/B/C/D", 1);
  index.insert("A/*/C/>", 2);
  index.insert("*/*", 3);
  index.insert(">", 4);
  EXPECT_GT(index.node_count(), 1u);
  EXPECT_TRUE(index.erase("A/*/C/>", 2));
  EXPECT_TRUE(index.erase("A/B/C/D", 1));
  EXPECT_EQ(index.node_count(), 3u);  // root, '*', '*/*'
  EXPECT_TRUE(index.erase("*/*", 3));
  EXPECT_TRUE(index.erase(">", 4));
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.node_count(), 1u);
}

TEST(PatternIndex, ClearRemovesEverything) {
  PatternIndex<int> index;
  index.insert("A/>", 1);
  index.insert("B", 2);
  index.clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.node_count(), 1u);
  EXPECT_EQ(matched(index, "A/B"), Ints{});
}

TEST(PatternIndex, HoldsNonTrivialValues) {
  PatternIndex<std::string> index;
  index.insert("A/*", "first");
  index.insert("A/*", "second");
  EXPECT_TRUE(index.erase("A/*", "first"));
  std::vector<std::string> values;
  index.match("A/B", [&](const std::string& value) { values.push_back(value); });
  EXPECT_EQ(values, std::vector<std::string>{"second"});
}

}  // namespace
}  // namespace tw::topic
