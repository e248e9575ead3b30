#include "cache/directory.h"

#include <functional>

namespace tw::cache {

ChannelDirectory::ChannelDirectory(uint32_t gateways, size_t max_channels)
    : gateways_(gateways == 0 ? 1 : gateways), max_channels_(max_channels), per_shard_(gateways_, 0) {}

uint32_t ChannelDirectory::shard_of(std::string_view topic) const {
  return static_cast<uint32_t>(std::hash<std::string_view>{}(topic) % gateways_);
}

ChannelDirectory::Interned ChannelDirectory::intern(std::string_view topic, wire::PayloadKind kind, bool may_create,
                                                    bool hold) {
  std::lock_guard lock(mutex_);
  auto it = by_topic_.find(std::string(topic));
  if (it != by_topic_.end()) {
    Known& k = it->second;
    if (k.kind != kind) return {Intern::KindMismatch, k.id, k.kind};
    k.holds += hold;
    return {Intern::Ok, k.id, k.kind};
  }
  if (by_topic_.size() >= max_channels_) return {Intern::Full, 0, kind};
  if (!may_create) return {Intern::NotCreated, 0, kind};
  const uint32_t shard = shard_of(topic);
  const ChannelId id = 1 + shard + gateways_ * per_shard_[shard]++;
  by_topic_.emplace(std::string(topic), Known{id, kind, hold ? 1u : 0u});
  return {Intern::Ok, id, kind, true};
}

size_t ChannelDirectory::size() {
  std::lock_guard lock(mutex_);
  return by_topic_.size();
}

bool ChannelDirectory::release(std::string_view topic) {
  std::lock_guard lock(mutex_);
  auto it = by_topic_.find(std::string(topic));
  if (it == by_topic_.end() || it->second.holds == 0) return true;
  return --it->second.holds == 0;
}

bool ChannelDirectory::forget_if_unheld(std::string_view topic, ChannelId id) {
  std::lock_guard lock(mutex_);
  auto it = by_topic_.find(std::string(topic));
  if (it == by_topic_.end() || it->second.id != id) return true;  // already renamed: this id is gone anyway
  if (it->second.holds > 0) return false;
  by_topic_.erase(it);
  return true;
}

}  // namespace tw::cache
