// The owner's view of interactive providers (private to src/broker).
// A Service is a first topic level with the providers that serve it; a
// Provider is one outlet serving one service, optionally limited to a pattern.
#pragma once
#include <algorithm>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "broker/outlet.h"
#include "cache/channel.h"
#include "topic/topic.h"

namespace tw::broker {

struct Provider {
  Outlet* outlet = nullptr;
  ProviderOutlet* requests = nullptr;  // outlet->as_provider(): where its streams are opened and closed
  std::string service;
  std::string pattern;                          // "" = every topic of the service
  std::unordered_set<cache::ChannelId> channels;  // streams it serves or was asked for
  uint32_t reported = 0;  // channels.size() as last told to the shared ProviderLoads
  uint32_t open() const { return static_cast<uint32_t>(channels.size()); }
  bool can_serve(std::string_view topic) const { return pattern.empty() || topic::matches(pattern, topic); }
};

struct Service {
  std::string name;
  std::vector<std::unique_ptr<Provider>> providers;
  size_t next_round_robin = 0;
  // Channels that wait for a provider (every one was lost or timed out).
  std::unordered_set<cache::ChannelId> orphans;

  Provider* find(Outlet* outlet) const {
    for (const auto& p : providers) {
      if (p->outlet == outlet) return p.get();
    }
    return nullptr;
  }
  void remove(Provider* provider) {
    providers.erase(std::remove_if(providers.begin(), providers.end(),
                                   [&](const auto& p) { return p.get() == provider; }),
                    providers.end());
  }
};

}  // namespace tw::broker
