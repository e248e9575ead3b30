#include "cache/channel_table.h"

namespace tw::cache {

Channel* ChannelTable::find(std::string_view topic) {
  const ChannelId* id = by_topic_.find(topic);
  return id ? get(*id) : nullptr;
}

Channel* ChannelTable::create(std::string_view topic, wire::PayloadKind kind) {
  if (channels_.size() >= max_channels_) return nullptr;
  auto ch = std::make_unique<Channel>();
  ch->id = static_cast<ChannelId>(channels_.size() + 1);
  ch->topic = std::string(topic);
  ch->kind = kind;
  by_topic_.insert(topic, ch->id);
  channels_.push_back(std::move(ch));
  return channels_.back().get();
}

}  // namespace tw::cache
