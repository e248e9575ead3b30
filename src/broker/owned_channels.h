// OwnedChannels: the owner of a loop's channels (docs/ARCHITECTURE.md, "The
// router's roles"): the single-threaded broker's loop, or a gateway of a
// tiered broker, whose subscriber side serves access points. It names
// channels (its own table, or the shared directory), applies what publishers
// send and hands it to its Subscribers to fan out, leaves interactive
// services to its InteractiveServices, runs the channel lifecycle
// (owned_lifecycle.cc: unused channels freed or kept with their last value,
// eviction), and answers listings and an administrator's close.
#pragma once
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "broker/channel_naming.h"
#include "broker/channel_owner.h"
#include "broker/interactive_services.h"
#include "broker/provider_balance.h"
#include "cache/channel_table.h"
#include "cache/directory.h"

namespace tw::broker {

class OwnedChannels final : public ChannelOwner, private ChannelKeeper {
 public:
  explicit OwnedChannels(const RouterLimits& limits, Clock clock = nullptr);
  ~OwnedChannels() override;

  // --- a gateway's ties to the others (docs/ARCHITECTURE.md, "Threads")
  // Channels get broker-wide ids from the shared directory.
  void name_by(cache::ChannelDirectory& directory);
  // Balancing counts each provider's streams in every gateway (`loads` is shared by them all).
  void share_provider_loads(ProviderLoads& loads);
  // Called with each channel freed, so the access points drop their copies.
  void on_channel_freed(std::function<void(cache::ChannelId)> fn) { freed_listener_ = std::move(fn); }
  // Called with each subscription added to or removed from a pattern (a broker
  // link forwards what nothing local serves upstream: tier/broker_link.h).
  void on_interest(std::function<void(std::string_view, bool)> fn) { interest_listener_ = std::move(fn); }
  // The last publisher hold of the channel went (tier::Op::Unheld); it may be freed.
  void channel_unheld(cache::ChannelId id);

  // --- ChannelOwner
  cache::ChannelTable& table() override { return channels_; }
  RouterStats& stats() override { return stats_; }
  void serve(Subscribers& subscribers) override;
  void interest(std::string_view pattern, bool add) override {
    if (interest_listener_) interest_listener_(pattern, add);
  }
  Outcome open(Outlet* by, std::string_view topic) override;
  void attached(cache::Channel& ch, bool exact, bool new_subscriber) override;
  void detached(cache::Channel& ch, bool exact) override;
  void outlet_gone(Outlet* outlet) override;
  Outcome settle(Outlet*, std::span<const std::string_view>, uint32_t) override { return {}; }
  Outcome advertise(std::string_view topic, wire::PayloadKind kind, cache::ChannelId& out, Advertiser* by) override;
  Outcome publish(cache::ChannelId id, std::span<const uint8_t> payload, bool image, fields::Checked checked,
                  const MessageOrigin& origin) override;
  Outcome provide(Outlet* outlet, std::string_view service, std::string_view pattern) override {
    return services_.provide(outlet, service, pattern);
  }
  Outcome withdraw(Outlet* outlet, std::string_view service) override { return services_.withdraw(outlet, service); }
  Outcome provider_publish(Outlet* outlet, cache::ChannelId id, std::span<const uint8_t> payload, bool image,
                           fields::Checked checked) override {
    return services_.provider_publish(outlet, id, payload, image, checked);
  }
  Outcome provider_status(Outlet* outlet, cache::ChannelId id, wire::ChannelState state, wire::Code code,
                          std::string_view text) override {
    return services_.provider_status(outlet, id, state, code, text);
  }
  Outcome publisher_status(Outlet* outlet, cache::ChannelId id, wire::ChannelState state, wire::Code code,
                           std::string_view text) override;
  Outcome snapshot(Outlet* outlet, std::string_view topic, uint32_t request_id) override;
  Outcome list_channels_page(Outlet* outlet, ListingCursor& cursor, size_t max_visits) override;
  uint32_t listing_shards() const override { return 1; }
  Outcome close_by_admin(std::string_view topic) override;
  void on_tick(uint64_t now) override;
  std::vector<std::pair<std::string, uint32_t>> provider_loads(std::string_view service) const override {
    return services_.provider_loads(service);
  }
  bool mirrors() const override { return false; }

 private:
  // What the owner keeps of one channel, beside the cache::Channel it describes.
  struct Route {
    uint64_t rate_seq = 0;         // seq at the last one-second sample
    uint32_t rate = 0;             // updates in the last full second
    uint32_t publishers = 0;       // outlets that registered it (advertise with an Advertiser)
    uint64_t free_at_ns = 0;       // when it may be freed, unused; 0 = in use
    uint64_t kept_since_ns = 0;    // unused and kept for its last value since then; 0 = not kept
    bool transient = false;        // its last value was published transient (MessageOrigin): not kept
  };

  Route& route(const cache::Channel& ch) { return routes_[ch.id - 1]; }
  const Route& route(const cache::Channel& ch) const { return routes_[ch.id - 1]; }
  // ChannelKeeper, for the interactive services.
  cache::Channel* create_channel(std::string_view topic, wire::PayloadKind kind) override;
  void consider_freeing(cache::Channel& ch) override;
  void sample_rates();
  // Channel lifecycle (owned_lifecycle.cc): a channel nobody publishes,
  // provides or subscribes to is freed after channel_linger_ms.
  bool unused(const cache::Channel& ch) const;
  void free_unused(uint64_t now);
  void free_channel(cache::Channel& ch);
  // Last values kept (owned_lifecycle.cc): whether an unused channel is kept
  // rather than freed, and the eviction of the oldest kept ones under pressure.
  bool keeps_last_value(cache::Channel& ch);
  void keep(cache::Channel& ch, uint64_t now);
  size_t evict_kept(size_t count);
  void relieve_pressure();
  void hold_publisher(Outlet* outlet, cache::Channel& ch);
  void release_publisher(Outlet* outlet);

  Subscribers* subscribers_ = nullptr;  // bound by the Router before any use (serve)
  RouterStats stats_;
  cache::ChannelTable channels_;
  std::vector<Route> routes_;  // by channel id - 1
  std::unique_ptr<ChannelNaming> naming_ = std::make_unique<LocalNaming>();
  std::function<void(cache::ChannelId)> freed_listener_ = [](cache::ChannelId) {};
  std::function<void(std::string_view, bool)> interest_listener_;  // none without a broker link
  InteractiveServices services_{limits_, clock_, channels_, stats_, *this};
  // Channels that became unused, in the order they did (the linger is one
  // constant, so their free times are nearly in order; one whose linger
  // restarted is freed late, never early): at most one entry per channel.
  std::deque<std::pair<uint64_t, cache::ChannelId>> unused_;
  // Unused channels kept for their last value, oldest first: (kept_since_ns,
  // id); an entry whose time is not its route's any more is stale (the
  // channel was used again, or freed) and skipped.
  std::deque<std::pair<uint64_t, cache::ChannelId>> kept_;
  size_t kept_count_ = 0;  // channels kept now (kept_ may hold stale entries too)
  std::unordered_map<Outlet*, std::unordered_set<cache::ChannelId>> published_by_;  // what each publisher holds
  uint64_t next_rate_sample_ns_ = 0;
};

}  // namespace tw::broker
