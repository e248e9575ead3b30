// Two tries over topic levels, owned by one thread (no internal locking):
//   PatternIndex<V>: subscription patterns -> values; match a literal topic
//                    against every stored pattern (used when a channel is created).
//   TopicIndex<V>:   literal topics -> values; match a pattern against every
//                    stored topic (used when a wildcard subscription arrives,
//                    to find the cached channels it covers).
// Inputs must already be valid (see topic.h). Callbacks must not modify the index.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tw::topic {

template <typename V>
class PatternIndex {
 public:
  // A pattern may hold several values; inserting an equal (pattern, value) twice stores it twice.
  void insert(std::string_view pattern, const V& value);
  // Removes one occurrence of (pattern, value); false if absent.
  bool erase(std::string_view pattern, const V& value);
  // fn(const V&) for every value whose pattern matches `topic` (once per stored occurrence).
  template <typename Fn>
  void match(std::string_view topic, Fn&& fn) const;
  size_t size() const;
  // (implementation defined by the topic module)
};

template <typename V>
class TopicIndex {
 public:
  // Replaces any value stored under `topic`.
  void insert(std::string_view topic, const V& value);
  bool erase(std::string_view topic);
  const V* find(std::string_view topic) const;
  // fn(std::string_view topic, const V&) for every stored topic matching `pattern`.
  template <typename Fn>
  void match(std::string_view pattern, Fn&& fn) const;
  size_t size() const;
};

}  // namespace tw::topic
