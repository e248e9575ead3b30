// How an owner names its channels: by its own table (LocalNaming: the single
// loop), or broker-wide through the directory the gateways of a tiered broker
// share (DirectoryNaming), which also knows whether a publisher on an access
// point holds a name the owner would free.
#pragma once
#include <cstddef>
#include <string_view>

#include "cache/channel_table.h"
#include "cache/directory.h"

namespace tw::broker {

class ChannelNaming {
 public:
  virtual ~ChannelNaming() = default;
  // The id a new channel takes (0: the table picks one); false when none can be given.
  virtual bool name(std::string_view topic, wire::PayloadKind kind, cache::ChannelId& id) = 0;
  // Whether the channel's name may go with it: no publisher elsewhere holds it.
  virtual bool forget_if_unheld(std::string_view topic, cache::ChannelId id) = 0;
  // Channels named broker-wide, against max_channels, and the owners that share them.
  virtual size_t named(const cache::ChannelTable& table) = 0;
  virtual size_t owners() const = 0;
};

class LocalNaming final : public ChannelNaming {
 public:
  bool name(std::string_view, wire::PayloadKind, cache::ChannelId& id) override {
    id = 0;
    return true;
  }
  bool forget_if_unheld(std::string_view, cache::ChannelId) override { return true; }
  size_t named(const cache::ChannelTable& table) override { return table.size(); }
  size_t owners() const override { return 1; }
};

class DirectoryNaming final : public ChannelNaming {
 public:
  explicit DirectoryNaming(cache::ChannelDirectory& directory) : directory_(directory) {}
  bool name(std::string_view topic, wire::PayloadKind kind, cache::ChannelId& id) override {
    auto named = directory_.intern(topic, kind);
    id = named.id;
    return named.result == cache::ChannelDirectory::Intern::Ok;
  }
  bool forget_if_unheld(std::string_view topic, cache::ChannelId id) override {
    return directory_.forget_if_unheld(topic, id);
  }
  size_t named(const cache::ChannelTable&) override { return directory_.size(); }
  size_t owners() const override { return directory_.gateways(); }

 private:
  cache::ChannelDirectory& directory_;
};

}  // namespace tw::broker
