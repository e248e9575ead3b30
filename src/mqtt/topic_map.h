// MQTT topics and filters as broker topics and patterns (docs/mqtt.md,
// "Mapping"). Levels map one to one ('/' is the separator in both); '+' is
// '*' and '#' is '>', and since MQTT's "a/#" also matches "a" it becomes two
// patterns, "a" and "a/>". MQTT allows empty levels ("/a", "a//b", "a/"),
// the broker's topics do not: an empty MQTT level is the level "∅" (U+2205,
// kEmptyLevel) in the broker's topic, and back on the way out; an MQTT topic
// or filter with a level that is "∅" itself is refused, so the mapping stays
// one to one. What else the broker's topic rules cannot express ('*' or '>'
// as literal characters) is refused.
#pragma once
#include <array>
#include <string>
#include <string_view>

#include "topic/topic.h"

namespace tw::mqtt {

inline constexpr std::string_view kEmptyLevel = "\xE2\x88\x85";  // "∅"

// The broker topic of an MQTT topic (or filter): `topic` itself when no level
// is empty, else the mapped copy made in `scratch`; empty (invalid) when a
// level is kEmptyLevel.
std::string_view broker_topic(std::string_view topic, std::string& scratch);
// The MQTT topic of a broker topic: its kEmptyLevel levels empty.
std::string_view mqtt_topic(std::string_view topic, std::string& scratch);
// mqtt_topic(topic).size(), without a copy.
size_t mqtt_topic_size(std::string_view topic);

struct Patterns {
  std::array<std::string, 2> pattern;
  size_t count = 0;
};

// A valid MQTT filter (codec.h, is_valid_filter) as broker patterns; false
// when the broker cannot express it.
bool map_filter(std::string_view filter, const topic::Limits& limits, Patterns& out);
// A topic filter for shared subscriptions, "$share/GROUP/filter" (4.8.2).
bool is_shared_filter(std::string_view filter);
// Where a shared filter's own filter starts (after "$share/GROUP/"); 0 when
// the share name is empty or holds '+' or '#' [MQTT-4.8.2-1], or no filter follows [MQTT-4.8.2-2].
size_t shared_filter_start(std::string_view filter);
// Whether the filter can match a topic that starts with '$' (4.7.2): only
// when its first level is not a wildcard.
bool reaches_dollar_topics(std::string_view filter);

}  // namespace tw::mqtt
