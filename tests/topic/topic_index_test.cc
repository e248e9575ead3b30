#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "topic/index.h"

namespace tw::topic {
namespace {

using Topics = std::vector<std::string>;

Topics matched(const TopicIndex<int>& index, std::string_view pattern) {
  Topics topics;
  index.match(pattern, [&](std::string_view topic, const int& value) {
    EXPECT_EQ(index.find(topic), &value);  // the reported topic is the one stored with value
    topics.emplace_back(topic);
  });
  std::sort(topics.begin(), topics.end());
  return topics;
}

TopicIndex<int> sample_index() {
  TopicIndex<int> index;
  int next = 0;
  for (const char* topic : {"NYSE/EQ/IBM", "NYSE/EQ/MSFT", "NYSE/FX/EUR", "NYSE", "NYSE/EQ",
                            "LSE/EQ/VOD", "LSE/EQ/VOD/BID", "A"}) {
    index.insert(topic, next++);
  }
  return index;
}

TEST(TopicIndex, FindReturnsTheStoredValue) {
  const TopicIndex<int> index = sample_index();
  EXPECT_EQ(index.size(), 8u);
  ASSERT_NE(index.find("NYSE/EQ/MSFT"), nullptr);
  EXPECT_EQ(*index.find("NYSE/EQ/MSFT"), 1);
  EXPECT_EQ(*index.find("NYSE"), 3);
  EXPECT_EQ(index.find("NYSE/EQ/IB"), nullptr);
  EXPECT_EQ(index.find("NYSE/FX"), nullptr);  // an inner node without an entry
  EXPECT_EQ(index.find("NYSE/EQ/IBM/BID"), nullptr);
  EXPECT_EQ(index.find(""), nullptr);
}

TEST(TopicIndex, LiteralPatternMatchesOnlyItself) {
  const TopicIndex<int> index = sample_index();
  EXPECT_EQ(matched(index, "NYSE/EQ"), Topics{"NYSE/EQ"});
  EXPECT_EQ(matched(index, "NYSE/FX"), Topics{});
  EXPECT_EQ(matched(index, "B"), Topics{});
}

TEST(TopicIndex, StarWalksEveryChild) {
  const TopicIndex<int> index = sample_index();
  EXPECT_EQ(matched(index, "*"), (Topics{"A", "NYSE"}));
  EXPECT_EQ(matched(index, "NYSE/*"), Topics{"NYSE/EQ"});
  EXPECT_EQ(matched(index, "*/EQ/*"), (Topics{"LSE/EQ/VOD", "NYSE/EQ/IBM", "NYSE/EQ/MSFT"}));
  EXPECT_EQ(matched(index, "*/*/*/*"), Topics{"LSE/EQ/VOD/BID"});
  EXPECT_EQ(matched(index, "*/*/*/*/*"), Topics{});
}

TEST(TopicIndex, GreaterWalksWholeSubtreesBelowItsLevel) {
  const TopicIndex<int> index = sample_index();
  EXPECT_EQ(matched(index, ">").size(), 8u);
  EXPECT_EQ(matched(index, "NYSE/>"), (Topics{"NYSE/EQ", "NYSE/EQ/IBM", "NYSE/EQ/MSFT", "NYSE/FX/EUR"}));
  EXPECT_EQ(matched(index, "A/>"), Topics{});  // '>' needs at least one level
  EXPECT_EQ(matched(index, "*/EQ/>"), (Topics{"LSE/EQ/VOD", "LSE/EQ/VOD/BID", "NYSE/EQ/IBM", "NYSE/EQ/MSFT"}));
  EXPECT_EQ(matched(index, "LSE/EQ/VOD/>"), Topics{"LSE/EQ/VOD/BID"});
}

TEST(TopicIndex, InsertReplacesTheValue) {
  TopicIndex<int> index;
  index.insert("A/B", 1);
  index.insert("A/B", 2);
  EXPECT_EQ(index.size(), 1u);
  EXPECT_EQ(*index.find("A/B"), 2);
}

TEST(TopicIndex, EraseRemovesOnlyThatTopic) {
  TopicIndex<int> index = sample_index();
  EXPECT_TRUE(index.erase("NYSE/EQ"));
  EXPECT_FALSE(index.erase("NYSE/EQ"));
  EXPECT_FALSE(index.erase("NYSE/FX"));
  EXPECT_FALSE(index.erase("NOPE/X"));
  EXPECT_FALSE(index.erase(""));
  EXPECT_EQ(index.size(), 7u);
  EXPECT_EQ(index.find("NYSE/EQ"), nullptr);
  ASSERT_NE(index.find("NYSE/EQ/IBM"), nullptr);
  EXPECT_EQ(matched(index, "NYSE/*"), Topics{});
  EXPECT_EQ(matched(index, "NYSE/EQ/*"), (Topics{"NYSE/EQ/IBM", "NYSE/EQ/MSFT"}));
}

TEST(TopicIndex, EmptiedNodesArePruned) {
  TopicIndex<int> index;
  EXPECT_EQ(index.node_count(), 1u);
  index.insert("A/B/C/D", 1);
  index.insert("A/B", 2);
  EXPECT_EQ(index.node_count(), 5u);
  EXPECT_TRUE(index.erase("A/B/C/D"));
  EXPECT_EQ(index.node_count(), 3u);  // root, A, A/B
  EXPECT_TRUE(index.erase("A/B"));
  EXPECT_EQ(index.node_count(), 1u);
  EXPECT_TRUE(index.empty());
}

TEST(TopicIndex, ClearRemovesEverything) {
  TopicIndex<int> index = sample_index();
  index.clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.node_count(), 1u);
  EXPECT_EQ(matched(index, ">"), Topics{});
}

}  // namespace
}  // namespace tw::topic
