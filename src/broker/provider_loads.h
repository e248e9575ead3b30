// The open streams of each interactive provider over all of a tiered
// broker's gateways. Each gateway's Router owns the channels of its shard and
// knows only its own share of a provider's streams; least-loaded balancing
// compares these totals instead, so 8 channels over 2 providers end 4/4 in
// every thread configuration, as on the single loop (docs/configuration.md,
// provider_balance). Touched when a request is made or a stream ends, never
// per message, so a mutex is cheap enough. Round robin likewise takes
// turns over all gateways, in one broker-wide order of the providers.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace tw::broker {

class ProviderLoads {
 public:
  // `provider` names the provider connection the same way in every gateway
  // (Outlet::provider_key); `service` is the service it serves.
  void add(uint64_t provider, std::string_view service, int64_t delta);
  uint32_t total(uint64_t provider, std::string_view service) const;
  // Round robin over all gateways: `choose(last)` returns the key of the
  // provider whose turn is next after `last` (0 = none yet; 0 returned = no
  // one), which becomes the last turn. It runs under the lock, so two
  // gateways choosing at the same moment take successive turns.
  template <typename Choose>
  uint64_t take_turn(std::string_view service, Choose&& choose) {
    std::lock_guard lock(mutex_);
    auto it = last_turn_.find(service);
    const uint64_t chosen = choose(it == last_turn_.end() ? uint64_t{0} : it->second);
    if (chosen == 0) return 0;
    if (it == last_turn_.end()) {
      last_turn_.emplace(std::string(service), chosen);
    } else {
      it->second = chosen;
    }
    return chosen;
  }

 private:
  using Key = std::pair<uint64_t, std::string>;
  mutable std::mutex mutex_;
  std::map<Key, int64_t> open_;
  std::map<std::string, uint64_t, std::less<>> last_turn_;
};

}  // namespace tw::broker
