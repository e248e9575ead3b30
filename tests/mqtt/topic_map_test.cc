#include "mqtt/topic_map.h"

#include <gtest/gtest.h>

namespace tw::mqtt {
namespace {

std::vector<std::string> map(std::string_view filter) {
  Patterns p;
  if (!map_filter(filter, {}, p)) return {"<refused>"};
  return {p.pattern.begin(), p.pattern.begin() + static_cast<long>(p.count)};
}

TEST(MqttTopicMap, WildcardsBecomeTheBrokersAndHashAlsoMatchesItsParent) {
  EXPECT_EQ(map("a/b"), (std::vector<std::string>{"a/b"}));
  EXPECT_EQ(map("a/+/c"), (std::vector<std::string>{"a/*/c"}));
  EXPECT_EQ(map("a/#"), (std::vector<std::string>{"a/>", "a"}));
  EXPECT_EQ(map("+/#"), (std::vector<std::string>{"*/>", "*"}));
  EXPECT_EQ(map("#"), (std::vector<std::string>{">"}));
}

TEST(MqttTopicMap, RefusesWhatTheBrokerCannotExpress) {
  for (auto filter : {"a//b", "/a", "a/", "a/*", "a/>", "x*y"}) EXPECT_EQ(map(filter)[0], "<refused>") << filter;
}

TEST(MqttTopicMap, DollarTopicsAndSharedFilters) {
  EXPECT_FALSE(reaches_dollar_topics("#"));
  EXPECT_FALSE(reaches_dollar_topics("+/x"));
  EXPECT_TRUE(reaches_dollar_topics("$SYS/#"));
  EXPECT_TRUE(is_shared_filter("$share/g/a/b"));
  EXPECT_FALSE(is_shared_filter("$sharex/a"));
}

}  // namespace
}  // namespace tw::mqtt
