// Both tries against the brute-force definition, matches(), over random inputs drawn
// from a small alphabet so that overlaps, prefixes and shared subtrees are common.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "topic/index.h"
#include "topic/topic.h"

namespace tw::topic {
namespace {

class RandomPaths {
 public:
  explicit RandomPaths(unsigned seed) : rng_(seed) {}

  std::string topic() {
    static const char* const kLevels[] = {"a", "b", "c", "ab"};
    std::string path;
    const int depth = pick(1, 4);
    for (int i = 0; i < depth; ++i) {
      if (i > 0) path += '/';
      path += kLevels[pick(0, 3)];
    }
    return path;
  }

  std::string pattern() {
    static const char* const kLevels[] = {"a", "b", "c", "ab", "*", "*"};
    std::string path;
    const int depth = pick(1, 4);
    for (int i = 0; i < depth; ++i) {
      if (i > 0) path += '/';
      const bool greater = i == depth - 1 && pick(0, 3) == 0;
      path += greater ? ">" : kLevels[pick(0, 5)];
    }
    return path;
  }

  int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }

 private:
  std::mt19937 rng_;
};

void expect_pattern_index_agrees(const PatternIndex<int>& index,
                                 const std::vector<std::string>& patterns,
                                 const std::vector<bool>& live, const std::string& topic) {
  std::vector<int> expected;
  for (size_t i = 0; i < patterns.size(); ++i) {
    if (live[i] && matches(patterns[i], topic)) expected.push_back(static_cast<int>(i));
  }
  std::vector<int> actual;
  index.match(topic, [&](const int& value) { actual.push_back(value); });
  std::sort(actual.begin(), actual.end());
  ASSERT_EQ(actual, expected) << "topic " << topic;
}

TEST(IndexCrossCheck, PatternIndexAgreesWithMatches) {
  RandomPaths random(12345);
  const Limits limits;
  std::vector<std::string> patterns;
  for (int i = 0; i < 400; ++i) {
    patterns.push_back(random.pattern());
    ASSERT_EQ(validate_pattern(patterns.back(), limits), Error::Ok) << patterns.back();
  }
  std::vector<bool> live(patterns.size(), true);
  PatternIndex<int> index;
  for (size_t i = 0; i < patterns.size(); ++i) index.insert(patterns[i], static_cast<int>(i));

  std::vector<std::string> topics;
  for (int i = 0; i < 3000; ++i) topics.push_back(random.topic());
  for (const auto& topic : topics) expect_pattern_index_agrees(index, patterns, live, topic);

  for (size_t i = 0; i < patterns.size(); i += 2) {
    ASSERT_TRUE(index.erase(patterns[i], static_cast<int>(i)));
    live[i] = false;
  }
  EXPECT_EQ(index.size(), patterns.size() / 2);
  for (const auto& topic : topics) expect_pattern_index_agrees(index, patterns, live, topic);

  for (size_t i = 1; i < patterns.size(); i += 2) ASSERT_TRUE(index.erase(patterns[i], static_cast<int>(i)));
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.node_count(), 1u);
}

// overlapping() against overlaps() and covers() on every stored pattern.
void expect_overlapping_agrees(const PatternIndex<int>& index, const std::vector<std::string>& patterns,
                               const std::string& query) {
  std::vector<std::pair<int, bool>> expected;
  for (size_t i = 0; i < patterns.size(); ++i) {
    if (overlaps(patterns[i], query)) expected.emplace_back(static_cast<int>(i), covers(patterns[i], query));
  }
  std::vector<std::pair<int, bool>> actual;
  index.overlapping(query, [&](const int& value, bool covering) { actual.emplace_back(value, covering); });
  std::sort(actual.begin(), actual.end());
  ASSERT_EQ(actual, expected) << "query " << query;
}

TEST(IndexCrossCheck, OverlappingAgreesWithThePatternRelations) {
  RandomPaths random(24680);
  std::vector<std::string> patterns;
  PatternIndex<int> index;
  for (int i = 0; i < 400; ++i) {
    patterns.push_back(random.pattern());
    index.insert(patterns.back(), i);
  }
  for (int i = 0; i < 2000; ++i) expect_overlapping_agrees(index, patterns, random.pattern());
  for (int i = 0; i < 500; ++i) expect_overlapping_agrees(index, patterns, random.topic());
}

void expect_topic_index_agrees(const TopicIndex<int>& index, const std::set<std::string>& topics,
                               const std::string& pattern) {
  std::vector<std::string> expected;
  for (const auto& topic : topics) {
    if (matches(pattern, topic)) expected.push_back(topic);
  }
  std::vector<std::string> actual;
  index.match(pattern, [&](std::string_view topic, const int&) { actual.emplace_back(topic); });
  std::sort(actual.begin(), actual.end());
  ASSERT_EQ(actual, expected) << "pattern " << pattern;
}

TEST(IndexCrossCheck, TopicIndexAgreesWithMatches) {
  RandomPaths random(67890);
  std::set<std::string> topics;
  TopicIndex<int> index;
  for (int i = 0; i < 3000; ++i) {
    const std::string topic = random.topic();
    topics.insert(topic);
    index.insert(topic, i);
  }
  EXPECT_EQ(index.size(), topics.size());

  std::vector<std::string> patterns;
  for (int i = 0; i < 2000; ++i) patterns.push_back(random.pattern());
  for (const auto& pattern : patterns) expect_topic_index_agrees(index, topics, pattern);

  for (auto it = topics.begin(); it != topics.end();) {
    if (random.pick(0, 1) == 0) {
      ASSERT_TRUE(index.erase(*it));
      it = topics.erase(it);
    } else {
      ++it;
    }
  }
  EXPECT_EQ(index.size(), topics.size());
  for (const auto& pattern : patterns) expect_topic_index_agrees(index, topics, pattern);

  for (const auto& topic : topics) ASSERT_TRUE(index.erase(topic));
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.node_count(), 1u);
}

}  // namespace
}  // namespace tw::topic
