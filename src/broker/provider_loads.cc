#include "broker/provider_loads.h"

namespace tw::broker {

void ProviderLoads::add(uint64_t provider, std::string_view service, int64_t delta) {
  if (delta == 0) return;
  std::lock_guard lock(mutex_);
  auto [it, added] = open_.try_emplace(Key{provider, std::string(service)}, 0);
  it->second += delta;
  if (it->second <= 0) open_.erase(it);  // a provider that serves nothing leaves no entry behind
}

uint32_t ProviderLoads::total(uint64_t provider, std::string_view service) const {
  std::lock_guard lock(mutex_);
  auto it = open_.find(Key{provider, std::string(service)});
  return it == open_.end() ? 0 : static_cast<uint32_t>(it->second);
}

}  // namespace tw::broker
