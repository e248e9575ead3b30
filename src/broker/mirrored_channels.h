// MirroredChannels: an access point's stand-in for the gateways that own its
// channels (docs/ARCHITECTURE.md, "Threads" and "The router's roles"). It
// keeps a copy of every channel its Subscribers deliver, so images,
// conflation and fan-out stay on the access point's thread; the gateways
// send it each channel's IMAGE, UPDATEs and state changes for the patterns
// it holds (one upstream interest per distinct pattern, however many local
// connections share it), and it turns them into channel events. Whatever
// changes a channel goes upstream (broker/upstream.h), through the rings.
#pragma once
#include <string>
#include <unordered_map>

#include "base/owner_thread.h"
#include "broker/channel_owner.h"
#include "broker/upstream.h"
#include "cache/channel_table.h"

namespace tw::broker {

class MirroredChannels final : public ChannelOwner {
 public:
  MirroredChannels(const RouterLimits& limits, Clock clock, Upstream& upstream);

  // --- what the owning gateway sends, in its order (tier/access_point_link.cc)
  void channel(cache::ChannelId id, std::string_view topic, wire::PayloadKind kind);
  // `frame`: the gateway's encoding, in the tier link's format (the native
  // protocol's). prior: the image the gateway sent as the subscription
  // reached it, state older than the local subscriptions (Outlet::send_prior_image).
  void message(cache::ChannelId id, uint64_t seq, std::span<const uint8_t> payload, std::span<const uint8_t> frame,
               bool image, bool prior = false, const MessageOrigin& origin = {});
  void status(cache::ChannelId id, wire::ChannelState state, wire::Code code, std::string_view text);
  // The gateway freed the channel (tier::Op::Forget).
  void forget(cache::ChannelId id);

  // --- ChannelOwner
  cache::ChannelTable& table() override { return copies_; }
  RouterStats& stats() override { return stats_; }
  void serve(Subscribers& subscribers) override;
  void claim_owner() override {
    owner_.claim();
    copies_.claim_owner();
  }
  void interest(std::string_view pattern, bool add) override;
  Outcome open(Outlet*, std::string_view) override { return {}; }
  void attached(cache::Channel& ch, bool exact, bool new_subscriber) override;
  void detached(cache::Channel& ch, bool exact) override;
  void outlet_gone(Outlet* outlet) override { upstream_.outlet_gone(outlet); }
  Outcome settle(Outlet* outlet, std::span<const std::string_view> patterns, uint32_t request_id) override;
  Outcome advertise(std::string_view topic, wire::PayloadKind kind, cache::ChannelId& out, Advertiser* by) override {
    return upstream_.advertise(topic, kind, out, by);
  }
  Outcome publish(cache::ChannelId id, std::span<const uint8_t> payload, bool image, fields::Checked,
                  const MessageOrigin& origin) override {
    return upstream_.publish(id, payload, image, origin);
  }
  Outcome provide(Outlet* outlet, std::string_view service, std::string_view pattern) override {
    return upstream_.provide(outlet, service, pattern);
  }
  Outcome withdraw(Outlet* outlet, std::string_view service) override { return upstream_.withdraw(outlet, service); }
  Outcome provider_publish(Outlet* outlet, cache::ChannelId id, std::span<const uint8_t> payload, bool image,
                           fields::Checked checked) override;
  Outcome provider_status(Outlet* outlet, cache::ChannelId id, wire::ChannelState state, wire::Code code,
                          std::string_view text) override;
  Outcome publisher_status(Outlet* outlet, cache::ChannelId id, wire::ChannelState state, wire::Code code,
                           std::string_view text) override {
    upstream_.publisher_status(outlet, id, state, code, text);
    return {};
  }
  Outcome snapshot(Outlet* outlet, std::string_view topic, uint32_t request_id) override;
  Outcome list_channels_page(Outlet* outlet, ListingCursor& cursor, size_t max_visits) override;
  uint32_t listing_shards() const override { return upstream_.shards(); }
  Outcome close_by_admin(std::string_view topic) override;
  void on_tick(uint64_t) override {}
  std::vector<std::pair<std::string, uint32_t>> provider_loads(std::string_view) const override { return {}; }
  bool mirrors() const override { return true; }

 private:
  // Reports how many local subscribers watch the channel; the copy of one nobody watches is forgotten.
  void count_subscribers(cache::Channel& ch);

  Upstream& upstream_;
  Subscribers* subscribers_ = nullptr;  // bound by the Router before any use (serve)
  cache::ChannelTable copies_;
  std::unordered_map<std::string, uint32_t> interest_;  // local subscriptions per pattern
  RouterStats stats_;
  [[no_unique_address]] OwnerThread owner_;
};

}  // namespace tw::broker
