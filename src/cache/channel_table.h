// ChannelTable: every channel this thread owns, by id and by topic, plus a
// topic trie so a wildcard subscription finds the cached channels it covers.
// Owned by one thread, its router's (checked in debug builds).
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/owner_thread.h"
#include "cache/channel.h"
#include "topic/index.h"

namespace tw::cache {

class ChannelTable {
 public:
  explicit ChannelTable(size_t max_channels) : max_channels_(max_channels) {}

  Channel* get(ChannelId id) {
    owner_.check("ChannelTable");
    return id == 0 || id > channels_.size() ? nullptr : channels_[id - 1].get();
  }
  Channel* find(std::string_view topic);
  // Creates the channel (seq 0, no data). nullptr when max_channels is reached.
  // `id` 0 takes the next id; a tiered broker passes the broker-wide id
  // (tier::ChannelDirectory), so a thread's ids may have holes.
  Channel* create(std::string_view topic, wire::PayloadKind kind, ChannelId id = 0);
  // Frees the channel: its topic, its image, its place under max_channels.
  // The id is not handed out again (a connection keeps its ids for its life).
  void erase(ChannelId id);
  // fn(Channel&) for every channel whose topic matches `pattern` (literal or wildcard).
  template <typename Fn>
  void match(std::string_view pattern, Fn&& fn);
  size_t size() const {
    owner_.check("ChannelTable");
    return count_;
  }
  // Every id is below this; get() of a hole is nullptr.
  ChannelId id_limit() const {
    owner_.check("ChannelTable");
    return static_cast<ChannelId>(channels_.size() + 1);
  }
  // The router's loop thread claims the table with the router (base/owner_thread.h).
  void claim_owner() { owner_.claim(); }

 private:
  size_t max_channels_;
  std::vector<std::unique_ptr<Channel>> channels_;  // by id - 1
  size_t count_ = 0;
  topic::TopicIndex<ChannelId> by_topic_;
  [[no_unique_address]] OwnerThread owner_;
};

template <typename Fn>
void ChannelTable::match(std::string_view pattern, Fn&& fn) {
  owner_.check("ChannelTable");
  by_topic_.match(pattern, [&](std::string_view, const ChannelId& id) { fn(*get(id)); });
}

}  // namespace tw::cache
