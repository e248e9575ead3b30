// ChannelDirectory: the broker-wide names of channels, shared by the threads
// of a tiered broker. A channel's id says which gateway owns it:
//   id = 1 + shard + gateways * n   (n = 0, 1, 2 ... per shard)
// and its shard is the hash of its topic, so any thread can route a topic or
// an id to its owner without asking. The directory is locked, but only when a
// channel is created or first advertised by a connection, never per message.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cache/channel.h"
#include "tickwire/wire/protocol.h"

namespace tw::cache {

class ChannelDirectory {
 public:
  ChannelDirectory(uint32_t gateways, size_t max_channels);

  // NotCreated: the topic is new and the caller may not create it (its quota).
  enum class Intern { Ok, KindMismatch, Full, NotCreated };
  struct Interned {
    Intern result = Intern::Ok;
    ChannelId id = 0;
    wire::PayloadKind kind = wire::PayloadKind::FieldList;  // the channel's kind, when it existed
    bool created = false;
  };
  // The channel of `topic`, created with `kind` when new (and `may_create`).
  // `hold`: a publisher registers it; the name is kept until release().
  Interned intern(std::string_view topic, wire::PayloadKind kind, bool may_create = true, bool hold = false);
  // A publisher's hold ends; true when none is left.
  bool release(std::string_view topic);
  // The owning gateway frees the channel: its name goes, unless a publisher
  // holds it (registered meanwhile, on any thread). True when it went.
  bool forget_if_unheld(std::string_view topic, ChannelId id);

  // Channels named now, over every gateway (locked: per tick, never per message).
  size_t size();
  size_t max_channels() const { return max_channels_; }

  uint32_t shard_of(std::string_view topic) const;
  uint32_t shard_of(ChannelId id) const { return (id - 1) % gateways_; }
  uint32_t gateways() const { return gateways_; }

 private:
  struct Known {
    ChannelId id;
    wire::PayloadKind kind;
    uint32_t holds = 0;  // publishers that registered it
  };
  const uint32_t gateways_;
  const size_t max_channels_;
  std::mutex mutex_;
  std::unordered_map<std::string, Known> by_topic_;
  std::vector<uint32_t> per_shard_;
};

}  // namespace tw::cache
