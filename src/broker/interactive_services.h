// InteractiveServices: the interactive part of a channel owner (docs/
// ARCHITECTURE.md, "Interactive channels"; the state diagram is there).
// Providers serve services (first topic levels); an exact subscription to a
// topic of a service with providers opens the channel with a REQUEST to one
// provider, chosen by the owner's ProviderBalance; wildcards only observe
// channels that are open. When the last exact subscription leaves, the
// channel is released after a linger. A provider that is lost makes its
// channels STALE, and they are requested again from another provider; a
// request not answered in time goes to the next one. It keeps, per channel,
// the provider, the pending request and the linger; its owner
// (OwnedChannels) keeps the channels and their lifecycle.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "broker/provider_balance.h"
#include "broker/router_limits.h"
#include "broker/services.h"
#include "cache/channel_table.h"

namespace tw::broker {

class Subscribers;

// What the interactive part needs of the channels' owner.
class ChannelKeeper {
 public:
  virtual ~ChannelKeeper() = default;
  // A new channel, named and announced to the subscriber side; null at the channel limit.
  virtual cache::Channel* create_channel(std::string_view topic, wire::PayloadKind kind) = 0;
  // The channel may have become unused: its lifecycle takes it from here.
  virtual void consider_freeing(cache::Channel& ch) = 0;
};

class InteractiveServices {
 public:
  InteractiveServices(const RouterLimits& limits, const Clock& clock, cache::ChannelTable& channels,
                      RouterStats& stats, ChannelKeeper& keeper);
  ~InteractiveServices();
  void serve(Subscribers& subscribers) { subscribers_ = &subscribers; }
  void balance_with(std::unique_ptr<ProviderBalance> balance) { balance_ = std::move(balance); }

  // --- per channel, for the owner
  void created(const cache::Channel& ch);
  void freed(const cache::Channel& ch);
  // A provider serves it, is asked for it, or its release lingers: in use.
  bool busy(const cache::Channel& ch) const;
  bool interactive(const cache::Channel& ch) const { return stream(ch).interactive; }
  // Listed unless it is an interactive channel neither served, asked for,
  // nor wanted by an exact subscription (released, NOT_FOUND, timed out).
  bool listed(const cache::Channel& ch) const;
  std::string_view provider_name(const cache::Channel& ch) const;

  // --- from the subscriber side (Interest)
  // An exact subscription: an interactive service's channel opens; not ok at the channel limit.
  Outcome open(Outlet* by, std::string_view topic);
  void attached(cache::Channel& ch, bool exact);
  void detached(cache::Channel& ch, bool exact);
  void outlet_gone(Outlet* outlet);

  // --- providers (as Router's)
  Outcome provide(Outlet* outlet, std::string_view service, std::string_view pattern);
  Outcome withdraw(Outlet* outlet, std::string_view service);
  Outcome provider_publish(Outlet* outlet, cache::ChannelId id, std::span<const uint8_t> payload, bool image,
                           fields::Checked checked);
  Outcome provider_status(Outlet* outlet, cache::ChannelId id, wire::ChannelState state, wire::Code code,
                          std::string_view text);
  // An administrator closes the channel: its provider is released, its streams end.
  void close_by_admin(cache::Channel& ch);
  // Request timeouts, release lingers, NOT_FOUND expiry.
  void on_tick(uint64_t now);
  std::vector<std::pair<std::string, uint32_t>> provider_loads(std::string_view service) const;

 private:
  // The interactive state of one channel, beside the cache::Channel it describes.
  struct Stream {
    bool interactive = false;
    Provider* provider = nullptr;  // the active provider, if any
    bool pending = false;          // REQUEST sent, no IMAGE yet
    uint64_t deadline_ns = 0;      // of the pending request
    uint64_t linger_until_ns = 0;  // release time once unwatched; 0 = not lingering
    std::vector<Outlet*> tried;    // providers that timed out on this request
  };
  Stream& stream(const cache::Channel& ch) { return streams_[ch.id - 1]; }
  const Stream& stream(const cache::Channel& ch) const { return streams_[ch.id - 1]; }

  Service* interactive_service(std::string_view topic);
  void open_interactive(cache::Channel& ch, Service& service, Outlet* requester);
  // Finds or creates the channel of an exact subscription and opens it; false at the channel limit.
  bool open_exact(Outlet* requester, std::string_view topic, Service& service);
  void open_waiting_subscriptions(Service& service);
  bool request(cache::Channel& ch, Service& service);
  Provider* choose_provider(Service& service, const cache::Channel& ch, const Stream& r);
  void detach_provider(cache::Channel& ch, bool send_release);
  // The channel's stream is over (Subscribers::end_streams).
  void close_channel(cache::Channel& ch, wire::Code code, std::string_view text);
  void lose_provider(Provider* provider);
  void expire_requests(uint64_t now);
  void release_lingering(uint64_t now);
  bool owns(Outlet* outlet, const cache::Channel& ch) const;

  const RouterLimits& limits_;
  const Clock& clock_;
  cache::ChannelTable& channels_;
  RouterStats& stats_;
  ChannelKeeper& keeper_;
  Subscribers* subscribers_ = nullptr;  // bound by the owner before any use
  std::unique_ptr<ProviderBalance> balance_ = std::make_unique<LocalBalance>();
  std::vector<Stream> streams_;  // by channel id - 1
  std::unordered_map<std::string, std::unique_ptr<Service>> services_;
  std::unordered_map<std::string, uint64_t> not_found_until_;  // topic -> expiry
  std::unordered_set<cache::ChannelId> pending_;    // channels with a request in flight
  std::unordered_set<cache::ChannelId> lingering_;  // interactive channels nobody watches
};

}  // namespace tw::broker
