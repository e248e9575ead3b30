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
  for (auto filter : {"a/*", "a/>", "x*y", "a/\u2205", "\u2205/#"}) EXPECT_EQ(map(filter)[0], "<refused>") << filter;
}

// MQTT's empty levels are the broker's "∅" levels, and back (the Paho
// suites' "/TopicA"); a topic without one is not copied.
TEST(MqttTopicMap, EmptyLevelsMapToTheEmptyLevelMarkerAndBack) {
  EXPECT_EQ(map("/a"), (std::vector<std::string>{"\u2205/a"}));
  EXPECT_EQ(map("a//b"), (std::vector<std::string>{"a/\u2205/b"}));
  EXPECT_EQ(map("/#"), (std::vector<std::string>{"\u2205/>", "\u2205"}));
  EXPECT_EQ(map("+/+"), (std::vector<std::string>{"*/*"}));
  std::string scratch;
  for (std::string_view mqtt : {"/a", "a//b", "a/", "/", "//x//"}) {
    const std::string broker(broker_topic(mqtt, scratch));
    EXPECT_EQ(broker.find("//"), std::string::npos) << mqtt;
    std::string back;
    EXPECT_EQ(mqtt_topic(broker, back), mqtt);
    EXPECT_EQ(mqtt_topic_size(broker), mqtt.size()) << mqtt;
  }
  const std::string_view plain = "a/b";
  EXPECT_EQ(broker_topic(plain, scratch).data(), plain.data());
  EXPECT_EQ(mqtt_topic(plain, scratch).data(), plain.data());
  EXPECT_TRUE(broker_topic("a/\u2205", scratch).empty());  // "∅" itself is not an MQTT level here
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
