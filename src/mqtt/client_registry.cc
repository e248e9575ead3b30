#include "mqtt/client_registry.h"

namespace tw::mqtt {

ClientRegistry& ClientRegistry::instance() {
  static ClientRegistry registry;
  return registry;
}

void ClientRegistry::claim(const std::string& client_id, std::atomic<bool>* taken_over) {
  std::lock_guard lock(mutex_);
  std::atomic<bool>*& holder = holders_[client_id];
  if (holder != nullptr && holder != taken_over) holder->store(true, std::memory_order_relaxed);
  holder = taken_over;
}

void ClientRegistry::release(const std::string& client_id, const std::atomic<bool>* taken_over) {
  std::lock_guard lock(mutex_);
  auto it = holders_.find(client_id);
  if (it != holders_.end() && it->second == taken_over) holders_.erase(it);
}

bool ClientRegistry::store(const std::string& client_id, StoredSession state, uint64_t now_ns) {
  std::lock_guard lock(mutex_);
  if (stored_.size() >= kMaxStored) drop_expired(now_ns);
  if (stored_.size() >= kMaxStored && !stored_.contains(client_id)) return false;
  stored_[client_id] = std::move(state);
  return true;
}

std::optional<StoredSession> ClientRegistry::take(const std::string& client_id, uint64_t now_ns) {
  std::lock_guard lock(mutex_);
  auto it = stored_.find(client_id);
  if (it == stored_.end()) return std::nullopt;
  StoredSession state = std::move(it->second);
  stored_.erase(it);
  if (state.expires_ns <= now_ns) return std::nullopt;
  return state;
}

void ClientRegistry::drop_expired(uint64_t now_ns) {
  std::erase_if(stored_, [now_ns](const auto& entry) { return entry.second.expires_ns <= now_ns; });
}

}  // namespace tw::mqtt
