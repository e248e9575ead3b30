#include <gtest/gtest.h>

#include <string_view>

#include "topic/topic.h"

namespace tw::topic {
namespace {

struct MatchCase {
  std::string_view pattern;
  std::string_view topic;
  bool expected;
};

const MatchCase kMatchCases[] = {
    // Literal patterns match only themselves.
    {"A", "A", true},
    {"NYSE/EQ/IBM", "NYSE/EQ/IBM", true},
    {"NYSE/EQ/IBM", "NYSE/EQ/IBMX", false},
    {"NYSE/EQ/IBM", "NYSE/EQ/IB", false},
    {"NYSE/EQ/IBM", "NYSE/EQ", false},
    {"NYSE/EQ", "NYSE/EQ/IBM", false},
    {"A", "AB", false},
    {"AB", "A", false},
    {"A/B", "AB", false},
    {"a", "A", false},  // case-sensitive
    // '*' is exactly one non-empty level.
    {"*", "A", true},
    {"*", "A/B", false},
    {"A/*", "A", false},
    {"A/*", "A/B", true},
    {"A/*", "A/B/C", false},
    {"*/*", "A", false},
    {"*/*", "A/B", true},
    {"*/*", "A/B/C", false},
    {"*/EQ/*", "NYSE/EQ/IBM", true},
    {"*/EQ/*", "NYSE/FX/IBM", false},
    {"NYSE/*/IBM", "NYSE/EQ/IBM", true},
    {"NYSE/*/IBM", "NYSE/EQ/MSFT", false},
    {"NYSE/*/IBM", "NYSE/IBM", false},
    {"*/*/*", "A/B/C", true},
    // '>' is one or more trailing levels.
    {">", "A", true},
    {">", "A/B", true},
    {">", "A/B/C/D/E/F", true},
    {"A/>", "A", false},
    {"A/>", "A/B", true},
    {"A/>", "A/B/C", true},
    {"A/>", "B/C", false},
    {"A/>", "AB/C", false},
    {"A/B/>", "A/B", false},
    {"A/B/>", "A/B/C", true},
    {"A/B/>", "A/C/D", false},
    {"*/>", "A", false},
    {"*/>", "A/B", true},
    {"*/>", "A/B/C", true},
    {"*/EQ/>", "NYSE/EQ/IBM", true},
    {"*/EQ/>", "NYSE/EQ/IBM/BID", true},
    {"*/EQ/>", "NYSE/EQ", false},
    {"*/*/>", "A/B", false},
    {"*/*/>", "A/B/C", true},
    // Characters that are ordinary inside a topic level.
    {"A/b-c/d_e.1", "A/b-c/d_e.1", true},
    {"A/*/d_e.1", "A/b-c/d_e.1", true},
    {"A B/C", "A B/C", true},
};

class MatchTable : public ::testing::TestWithParam<MatchCase> {};

TEST_P(MatchTable, MatchesAsSpecified) {
  const MatchCase& c = GetParam();
  EXPECT_EQ(matches(c.pattern, c.topic), c.expected)
      << "pattern '" << c.pattern << "' vs topic '" << c.topic << "'";
}

INSTANTIATE_TEST_SUITE_P(Topic, MatchTable, ::testing::ValuesIn(kMatchCases));

TEST(Match, EveryValidTopicMatchesItselfAsPattern) {
  for (std::string_view topic : {"A", "A/B", "NYSE/EQ/IBM", "a/b/c/d/e/f/g/h"}) {
    EXPECT_TRUE(matches(topic, topic)) << topic;
  }
}

TEST(Match, EmptyArgumentsNeverMatch) {
  EXPECT_FALSE(matches("", ""));
  EXPECT_FALSE(matches(">", ""));
  EXPECT_FALSE(matches("", "A"));
}

TEST(IsWildcard, DetectsWholeLevelWildcards) {
  EXPECT_TRUE(is_wildcard("*"));
  EXPECT_TRUE(is_wildcard(">"));
  EXPECT_TRUE(is_wildcard("A/*"));
  EXPECT_TRUE(is_wildcard("A/>"));
  EXPECT_TRUE(is_wildcard("*/B/C"));
  EXPECT_TRUE(is_wildcard("A/*/C"));
  EXPECT_FALSE(is_wildcard("A"));
  EXPECT_FALSE(is_wildcard("NYSE/EQ/IBM"));
  EXPECT_FALSE(is_wildcard(""));
}

TEST(ServiceOf, IsTheFirstLevel) {
  EXPECT_EQ(service_of("NYSE/EQ/IBM"), "NYSE");
  EXPECT_EQ(service_of("DEMO"), "DEMO");
  EXPECT_EQ(service_of("A/B"), "A");
  EXPECT_EQ(service_of("*/B"), "*");
}

TEST(PatternRelations, Overlaps) {
  EXPECT_TRUE(overlaps("EQ/>", "EQ/IBM"));
  EXPECT_TRUE(overlaps(">", "FX/EUR"));
  EXPECT_TRUE(overlaps("EQ/*", "*/IBM"));
  EXPECT_TRUE(overlaps("EQ/>", "*/IBM/X"));
  EXPECT_FALSE(overlaps("EQ/>", "EQ"));  // '>' needs one level or more
  EXPECT_FALSE(overlaps("EQ/*", "EQ/IBM/X"));
  EXPECT_FALSE(overlaps("EQ/IBM", "FX/IBM"));
  EXPECT_TRUE(overlaps("EQ/IBM", "EQ/IBM"));
}

TEST(PatternRelations, Covers) {
  EXPECT_TRUE(covers("EQ/>", "EQ/IBM"));
  EXPECT_TRUE(covers("EQ/>", "EQ/*/X"));
  EXPECT_TRUE(covers("EQ/>", "EQ/>"));
  EXPECT_TRUE(covers("*/IBM", "EQ/IBM"));
  EXPECT_FALSE(covers("EQ/*", "EQ/>"));
  EXPECT_FALSE(covers("EQ/IBM", "EQ/*"));
  EXPECT_FALSE(covers("EQ/>", "EQ"));
  EXPECT_FALSE(covers("EQ/IBM", ">"));
}

}  // namespace
}  // namespace tw::topic
