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

}  // namespace tw::mqtt
