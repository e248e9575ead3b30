#include "mqtt/client_registry.h"

#include "base/log.h"

namespace tw::mqtt {

bool ClientRegistry::claim(const ClientKey& key, std::atomic<bool>* taken_over, bool waits) {
  std::lock_guard lock(mutex_);
  std::atomic<bool>*& holder = holders_[key];
  const bool had_holder = holder != nullptr && holder != taken_over;
  if (had_holder) holder->store(true, std::memory_order_relaxed);
  holder = taken_over;
  if (waits && had_holder) waiting_.insert(taken_over);
  // A session already handed over to a holder that was taken over in turn goes on to the newest.
  if (auto it = handed_over_.find(key); it != handed_over_.end()) {
    if (waits && had_holder) {
      it->second.first = taken_over;
    } else {
      handed_over_.erase(it);
    }
  }
  return had_holder;
}

void ClientRegistry::release(const ClientKey& key, const std::atomic<bool>* taken_over) {
  std::lock_guard lock(mutex_);
  auto it = holders_.find(key);
  if (it != holders_.end() && it->second == taken_over) holders_.erase(it);
  waiting_.erase(taken_over);
  auto handed = handed_over_.find(key);
  if (handed != handed_over_.end() && handed->second.first == taken_over) handed_over_.erase(handed);
}

ClientRegistry::Ended ClientRegistry::end(const ClientKey& key, const std::atomic<bool>* holder,
                                          std::optional<StoredSession> state, uint64_t now_ns) {
  std::lock_guard lock(mutex_);
  auto current = holders_.find(key);
  if (current == holders_.end() || current->second == holder) {  // not taken over, or the successor is gone already
    if (current != holders_.end()) holders_.erase(current);
    if (state && !store_locked(key, std::move(*state), now_ns)) {
      TW_WARN("MQTT session '%s' not kept: %zu sessions are stored already", key.client_id.c_str(), kMaxStored);
    }
    return Ended::Kept;
  }
  if (!waiting_.contains(current->second)) return Ended::Over;  // the successor started clean
  handed_over_[key] = {current->second, std::move(state)};
  return Ended::HandedOver;
}

std::optional<std::optional<StoredSession>> ClientRegistry::take_handover(const ClientKey& key,
                                                                          const std::atomic<bool>* taken_over) {
  std::lock_guard lock(mutex_);
  auto it = handed_over_.find(key);
  if (it == handed_over_.end() || it->second.first != taken_over) return std::nullopt;
  std::optional<StoredSession> state = std::move(it->second.second);
  handed_over_.erase(it);
  waiting_.erase(taken_over);
  return state;
}

void ClientRegistry::stop_waiting(const std::atomic<bool>* taken_over) {
  std::lock_guard lock(mutex_);
  waiting_.erase(taken_over);
}

bool ClientRegistry::store(const ClientKey& key, StoredSession state, uint64_t now_ns) {
  std::lock_guard lock(mutex_);
  return store_locked(key, std::move(state), now_ns);
}

bool ClientRegistry::store_locked(const ClientKey& key, StoredSession state, uint64_t now_ns) {
  if (stored_.size() >= kMaxStored) drop_expired(now_ns);
  if (stored_.size() >= kMaxStored && !stored_.contains(key)) return false;
  stored_[key] = std::move(state);
  return true;
}

std::optional<StoredSession> ClientRegistry::take(const ClientKey& key, uint64_t now_ns) {
  std::lock_guard lock(mutex_);
  auto it = stored_.find(key);
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
