// Two tries over topic levels, owned by one thread (no internal locking):
//   PatternIndex<V>: subscription patterns -> values; match a literal topic
//                    against every stored pattern (used when a channel is created).
//   TopicIndex<V>:   literal topics -> values; match a pattern against every
//                    stored topic (used when a wildcard subscription arrives,
//                    to find the cached channels it covers).
// Inputs must already be valid (see topic.h). Callbacks must not modify the index.
// match() and find() never allocate: levels are string_views into the argument and
// children are looked up by string_view (heterogeneous lookup). Nodes left empty by
// erase() are freed at once, so memory follows the live set, not its history.
#pragma once
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "topic/levels.h"

namespace tw::topic {
namespace detail {

struct LevelHash {
  using is_transparent = void;
  size_t operator()(std::string_view level) const noexcept {
    return std::hash<std::string_view>{}(level);
  }
};

// Children keyed by level text, found by string_view without building a std::string.
template <typename Node>
using LevelMap = std::unordered_map<std::string, std::unique_ptr<Node>, LevelHash, std::equal_to<>>;

template <typename Node>
Node& child_or_create(LevelMap<Node>& children, std::string_view level) {
  auto it = children.find(level);
  if (it == children.end()) {
    it = children.emplace(std::string(level), std::make_unique<Node>()).first;
  }
  return *it->second;
}

template <typename Node>
const Node* child_or_null(const LevelMap<Node>& children, std::string_view level) {
  const auto it = children.find(level);
  return it == children.end() ? nullptr : it->second.get();
}

}  // namespace detail

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
  // fn(std::string_view pattern, const V&) for every exact (wildcard-free)
  // pattern whose first level is `first_level`. Builds each pattern's text,
  // so it allocates: for rare events (a provider arriving), not per message.
  template <typename Fn>
  void for_each_exact_under(std::string_view first_level, Fn&& fn) const;
  // fn(const V&, bool covers) for every value whose pattern overlaps the
  // valid pattern `pattern` (topic.h: some topic matches both); `covers`: the
  // stored pattern also matches every topic `pattern` matches. A walk of the
  // branches `pattern` can reach, not of every stored pattern: for questions
  // about a wildcard subscription against many rules.
  template <typename Fn>
  void overlapping(std::string_view pattern, Fn&& fn) const;
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear();
  // Trie nodes currently allocated, root included; for memory accounting and tests.
  size_t node_count() const { return count_nodes(root_); }

 private:
  // A node stands for a pattern prefix P. `values` belong to the pattern P itself,
  // `greater_values` to "P/>" (at the root: to ">"), so '>' needs no node of its own.
  struct Node {
    detail::LevelMap<Node> literal_children;
    std::unique_ptr<Node> star_child;
    std::vector<V> values;
    std::vector<V> greater_values;

    bool empty() const {
      return literal_children.empty() && !star_child && values.empty() && greater_values.empty();
    }
  };

  // Returns the value list for `pattern`, creating the nodes on the way.
  std::vector<V>& values_for_insert(std::string_view pattern);
  bool erase_below(Node& node, std::string_view pattern, const V& value);
  static bool erase_one(std::vector<V>& values, const V& value);
  template <typename Fn>
  static void match_below(const Node& node, std::string_view topic, Fn& fn);
  template <typename Fn>
  static void visit_exact(const Node& node, std::string& path, Fn& fn);
  template <typename Fn>
  static void overlap_below(const Node& node, std::string_view pattern, bool covering, Fn& fn);
  template <typename Fn>
  static void visit_below(const Node& node, Fn& fn);
  static size_t count_nodes(const Node& node);

  Node root_;
  size_t size_ = 0;
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
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear();
  // Trie nodes currently allocated, root included; for memory accounting and tests.
  size_t node_count() const { return count_nodes(root_); }

 private:
  // The full topic is kept beside its value so match() can report it without
  // rebuilding it from the levels (which would allocate).
  struct Entry {
    std::string topic;
    V value;
  };
  struct Node {
    detail::LevelMap<Node> children;
    std::optional<Entry> entry;

    bool empty() const { return children.empty() && !entry; }
  };

  const Node* find_node(std::string_view topic) const;
  bool erase_below(Node& node, std::string_view topic);
  template <typename Fn>
  static void match_below(const Node& node, std::string_view pattern, Fn& fn);
  template <typename Fn>
  static void visit_subtree(const Node& node, Fn& fn);
  static size_t count_nodes(const Node& node);

  Node root_;
  size_t size_ = 0;
};

// ---- PatternIndex ----------------------------------------------------------

template <typename V>
void PatternIndex<V>::insert(std::string_view pattern, const V& value) {
  values_for_insert(pattern).push_back(value);
  ++size_;
}

template <typename V>
std::vector<V>& PatternIndex<V>::values_for_insert(std::string_view pattern) {
  Node* node = &root_;
  for (;;) {
    const auto [level, rest] = split_first_level(pattern);
    if (level == kGreater) return node->greater_values;
    if (level == kStar) {
      if (!node->star_child) node->star_child = std::make_unique<Node>();
      node = node->star_child.get();
    } else {
      node = &detail::child_or_create(node->literal_children, level);
    }
    if (rest.empty()) return node->values;
    pattern = rest;
  }
}

template <typename V>
bool PatternIndex<V>::erase(std::string_view pattern, const V& value) {
  if (!erase_below(root_, pattern, value)) return false;
  --size_;
  return true;
}

// Erases (pattern, value) under `node`, then frees the child on the path if it emptied.
template <typename V>
bool PatternIndex<V>::erase_below(Node& node, std::string_view pattern, const V& value) {
  const auto [level, rest] = split_first_level(pattern);
  if (level == kGreater) return erase_one(node.greater_values, value);
  if (level == kStar) {
    if (!node.star_child) return false;
    const bool erased = rest.empty() ? erase_one(node.star_child->values, value)
                                     : erase_below(*node.star_child, rest, value);
    if (erased && node.star_child->empty()) node.star_child.reset();
    return erased;
  }
  const auto it = node.literal_children.find(level);
  if (it == node.literal_children.end()) return false;
  Node& child = *it->second;
  const bool erased = rest.empty() ? erase_one(child.values, value) : erase_below(child, rest, value);
  if (erased && child.empty()) node.literal_children.erase(it);
  return erased;
}

template <typename V>
bool PatternIndex<V>::erase_one(std::vector<V>& values, const V& value) {
  const auto it = std::find(values.begin(), values.end(), value);
  if (it == values.end()) return false;
  values.erase(it);
  return true;
}

template <typename V>
template <typename Fn>
void PatternIndex<V>::match(std::string_view topic, Fn&& fn) const {
  if (topic.empty()) return;
  match_below(root_, topic, fn);
}

// `topic` holds the levels not yet consumed; it is never empty here.
template <typename V>
template <typename Fn>
void PatternIndex<V>::match_below(const Node& node, std::string_view topic, Fn& fn) {
  for (const V& value : node.greater_values) fn(value);
  const auto [level, rest] = split_first_level(topic);
  const Node* const children[] = {detail::child_or_null(node.literal_children, level),
                                  node.star_child.get()};
  for (const Node* child : children) {
    if (child == nullptr) continue;
    if (rest.empty()) {
      for (const V& value : child->values) fn(value);
    } else {
      match_below(*child, rest, fn);
    }
  }
}

template <typename V>
template <typename Fn>
void PatternIndex<V>::for_each_exact_under(std::string_view first_level, Fn&& fn) const {
  const Node* node = detail::child_or_null(root_.literal_children, first_level);
  if (node == nullptr) return;
  std::string path(first_level);
  visit_exact(*node, path, fn);
}

// Only literal children: a '*' or '>' anywhere makes a pattern a wildcard.
template <typename V>
template <typename Fn>
void PatternIndex<V>::visit_exact(const Node& node, std::string& path, Fn& fn) {
  for (const V& value : node.values) fn(std::string_view(path), value);
  for (const auto& [level, child] : node.literal_children) {
    const size_t length = path.size();
    path.append("/").append(level);
    visit_exact(*child, path, fn);
    path.resize(length);
  }
}

template <typename V>
template <typename Fn>
void PatternIndex<V>::overlapping(std::string_view pattern, Fn&& fn) const {
  if (pattern.empty()) return;
  overlap_below(root_, pattern, true, fn);
}

// `node` stands for a stored prefix that overlaps the levels of the query
// already consumed (and covers them while `covering`); `pattern` holds the
// query's remaining levels, never empty here.
template <typename V>
template <typename Fn>
void PatternIndex<V>::overlap_below(const Node& node, std::string_view pattern, bool covering, Fn& fn) {
  // A stored '>' here takes whatever is left of the query, '>' included.
  for (const V& value : node.greater_values) fn(value, covering);
  // Named fields, not a structured binding: clang 14 (the fuzz tree) refuses a lambda capturing one.
  const LevelSplit split = split_first_level(pattern);
  const std::string_view level = split.level, rest = split.rest;
  if (level == kGreater) {  // every longer stored pattern overlaps; only a stored '>' covers a '>'
    if (node.star_child) visit_below(*node.star_child, fn);
    for (const auto& [text, child] : node.literal_children) visit_below(*child, fn);
    return;
  }
  auto down = [&](const Node* child, bool child_covers) {
    if (child == nullptr) return;
    if (!rest.empty()) return overlap_below(*child, rest, child_covers, fn);
    for (const V& value : child->values) fn(value, child_covers);  // ends where the query ends
  };
  down(node.star_child.get(), covering);  // a stored '*' covers any one level
  if (level != kStar) return down(detail::child_or_null(node.literal_children, level), covering);
  for (const auto& [text, child] : node.literal_children) down(child.get(), false);
}

// Every value of `node` and below, none of which covers the query's '>'.
template <typename V>
template <typename Fn>
void PatternIndex<V>::visit_below(const Node& node, Fn& fn) {
  for (const V& value : node.values) fn(value, false);
  for (const V& value : node.greater_values) fn(value, false);
  if (node.star_child) visit_below(*node.star_child, fn);
  for (const auto& [text, child] : node.literal_children) visit_below(*child, fn);
}

template <typename V>
void PatternIndex<V>::clear() {
  root_ = Node{};
  size_ = 0;
}

template <typename V>
size_t PatternIndex<V>::count_nodes(const Node& node) {
  size_t count = 1;
  for (const auto& [level, child] : node.literal_children) count += count_nodes(*child);
  if (node.star_child) count += count_nodes(*node.star_child);
  return count;
}

// ---- TopicIndex ------------------------------------------------------------

template <typename V>
void TopicIndex<V>::insert(std::string_view topic, const V& value) {
  Node* node = &root_;
  for (std::string_view rest = topic; !rest.empty();) {
    const auto split = split_first_level(rest);
    node = &detail::child_or_create(node->children, split.level);
    rest = split.rest;
  }
  if (node->entry) {
    node->entry->value = value;
    return;
  }
  node->entry.emplace(Entry{std::string(topic), value});
  ++size_;
}

template <typename V>
bool TopicIndex<V>::erase(std::string_view topic) {
  if (topic.empty() || !erase_below(root_, topic)) return false;
  --size_;
  return true;
}

// Erases the entry for `topic` under `node`, then frees the child on the path if it emptied.
template <typename V>
bool TopicIndex<V>::erase_below(Node& node, std::string_view topic) {
  const auto [level, rest] = split_first_level(topic);
  const auto it = node.children.find(level);
  if (it == node.children.end()) return false;
  Node& child = *it->second;
  bool erased = false;
  if (rest.empty()) {
    erased = child.entry.has_value();
    child.entry.reset();
  } else {
    erased = erase_below(child, rest);
  }
  if (erased && child.empty()) node.children.erase(it);
  return erased;
}

template <typename V>
const V* TopicIndex<V>::find(std::string_view topic) const {
  const Node* node = find_node(topic);
  return node != nullptr && node->entry ? &node->entry->value : nullptr;
}

template <typename V>
auto TopicIndex<V>::find_node(std::string_view topic) const -> const Node* {
  if (topic.empty()) return nullptr;
  const Node* node = &root_;
  while (node != nullptr && !topic.empty()) {
    const auto [level, rest] = split_first_level(topic);
    node = detail::child_or_null(node->children, level);
    topic = rest;
  }
  return node;
}

template <typename V>
template <typename Fn>
void TopicIndex<V>::match(std::string_view pattern, Fn&& fn) const {
  if (pattern.empty()) return;
  match_below(root_, pattern, fn);
}

// `pattern` holds the levels not yet consumed; it is never empty here.
template <typename V>
template <typename Fn>
void TopicIndex<V>::match_below(const Node& node, std::string_view pattern, Fn& fn) {
  const LevelSplit split = split_first_level(pattern);
  const std::string_view level = split.level;
  const std::string_view rest = split.rest;
  auto descend = [&](const Node& child) {
    if (!rest.empty()) {
      match_below(child, rest, fn);
    } else if (child.entry) {
      fn(std::string_view(child.entry->topic), std::as_const(child.entry->value));
    }
  };
  if (level == kGreater) {
    for (const auto& [name, child] : node.children) visit_subtree(*child, fn);
  } else if (level == kStar) {
    for (const auto& [name, child] : node.children) descend(*child);
  } else if (const Node* child = detail::child_or_null(node.children, level)) {
    descend(*child);
  }
}

template <typename V>
template <typename Fn>
void TopicIndex<V>::visit_subtree(const Node& node, Fn& fn) {
  if (node.entry) fn(std::string_view(node.entry->topic), std::as_const(node.entry->value));
  for (const auto& [name, child] : node.children) visit_subtree(*child, fn);
}

template <typename V>
void TopicIndex<V>::clear() {
  root_ = Node{};
  size_ = 0;
}

template <typename V>
size_t TopicIndex<V>::count_nodes(const Node& node) {
  size_t count = 1;
  for (const auto& [name, child] : node.children) count += count_nodes(*child);
  return count;
}

}  // namespace tw::topic
