#include "mqtt/shared_groups.h"

#include <algorithm>
#include <functional>
#include <string>

namespace tw::mqtt {

bool SharedGroups::Member::owns(std::string_view topic) const {
  const uint32_t n = size.load(std::memory_order_relaxed);
  return n <= 1 || std::hash<std::string_view>{}(topic) % n == index.load(std::memory_order_relaxed);
}

// The user's name with its length first: no user and share name can spell another pair's key.
std::string SharedGroups::key(std::string_view user, std::string_view share) {
  return std::to_string(user.size()) + ':' + std::string(user) + std::string(share);
}

SharedGroups::Member* SharedGroups::join(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto& group = groups_[key];
  group.push_back(std::make_unique<Member>());
  Member* member = group.back().get();
  renumber(group);
  return member;
}

void SharedGroups::leave(const std::string& key, Member* member) {
  std::lock_guard lock(mutex_);
  auto it = groups_.find(key);
  if (it == groups_.end()) return;
  auto& group = it->second;
  std::erase_if(group, [member](const std::unique_ptr<Member>& m) { return m.get() == member; });
  if (group.empty()) {
    groups_.erase(it);
  } else {
    renumber(group);
  }
}

size_t SharedGroups::members(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = groups_.find(key);
  return it == groups_.end() ? 0 : it->second.size();
}

void SharedGroups::renumber(std::vector<std::unique_ptr<Member>>& group) {
  const auto n = static_cast<uint32_t>(group.size());
  for (uint32_t i = 0; i < n; ++i) {
    group[i]->index.store(i, std::memory_order_relaxed);
    group[i]->size.store(n, std::memory_order_relaxed);
  }
}

}  // namespace tw::mqtt
