#include "cache/channel_table.h"

namespace tw::cache {

Channel* ChannelTable::find(std::string_view topic) {
  owner_.check("ChannelTable");
  const ChannelId* id = by_topic_.find(topic);
  return id ? get(*id) : nullptr;
}

Channel* ChannelTable::create(std::string_view topic, wire::PayloadKind kind, ChannelId id) {
  owner_.check("ChannelTable");
  if (count_ >= max_channels_) return nullptr;
  if (id == 0) id = static_cast<ChannelId>(channels_.size() + 1);
  if (id > channels_.size()) channels_.resize(id);
  auto& slot = channels_[id - 1];
  if (slot) return nullptr;  // a caller bug: ids are never reused
  slot = std::make_unique<Channel>();
  slot->id = id;
  slot->topic = std::string(topic);
  slot->kind = kind;
  by_topic_.insert(topic, id);
  ++count_;
  return slot.get();
}

void ChannelTable::erase(ChannelId id) {
  owner_.check("ChannelTable");
  Channel* ch = get(id);
  if (!ch) return;
  if (const ChannelId* named = by_topic_.find(ch->topic); named && *named == id) by_topic_.erase(ch->topic);
  channels_[id - 1].reset();
  --count_;
}

}  // namespace tw::cache
