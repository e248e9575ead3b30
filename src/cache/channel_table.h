// ChannelTable: every channel this thread owns, by id and by topic, plus a
// topic trie so a wildcard subscription finds the cached channels it covers.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cache/channel.h"
#include "topic/index.h"

namespace tw::cache {

class ChannelTable {
 public:
  explicit ChannelTable(size_t max_channels) : max_channels_(max_channels) {}

  Channel* get(ChannelId id) {
    return id == 0 || id > channels_.size() ? nullptr : channels_[id - 1].get();
  }
  Channel* find(std::string_view topic);
  // Creates the channel (seq 0, no data). nullptr when max_channels is reached.
  Channel* create(std::string_view topic, wire::PayloadKind kind);
  // fn(Channel&) for every channel whose topic matches `pattern` (literal or wildcard).
  template <typename Fn>
  void match(std::string_view pattern, Fn&& fn);
  size_t size() const { return channels_.size(); }

 private:
  size_t max_channels_;
  std::vector<std::unique_ptr<Channel>> channels_;
  topic::TopicIndex<ChannelId> by_topic_;
};

template <typename Fn>
void ChannelTable::match(std::string_view pattern, Fn&& fn) {
  by_topic_.match(pattern, [&](std::string_view, const ChannelId& id) { fn(*get(id)); });
}

}  // namespace tw::cache
