// Router: the broker logic of topic pub/sub with a last-value cache and
// interactive providers, free of sockets and encodings; what the sessions of
// one loop call. It joins a subscriber side (broker/subscribers.h: patterns,
// per-channel subscriber entries, fan-out, delay, entitlement re-checks) to
// the owner of the channels it delivers (broker/channel_owner.h), which
// plays the loop's role (docs/ARCHITECTURE.md, "The router's roles"):
//   - the single-threaded broker: OwnedChannels, the channels themselves;
//   - a gateway of a tiered broker: OwnedChannels named by the shared
//     directory, whose subscribers are access points (tier/gateway.cc);
//   - an access point: MirroredChannels, copies of the channels gateways
//     own; what changes a channel goes upstream through the rings.
// Subscriptions go to the subscriber side, publishers, providers and
// administrators to the owner; the router itself holds no role.
//
// Owned by one reactor thread, which claims it (claim_owner) when its loop
// starts; debug builds abort when a public method runs on another thread
// (base/owner_thread.h). Guarantees, per outlet:
//   - a channel's IMAGE comes before its UPDATEs, and reflects exactly the
//     updates before it (same thread, same ordered output queue);
//   - overlapping patterns deliver each message once (one entry per outlet);
//   - per-channel order is publish order.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/owner_thread.h"
#include "broker/channel_owner.h"
#include "output/fanout.h"
#include "broker/outlet.h"
#include "broker/router_limits.h"
#include "broker/subscribers.h"
#include "broker/upstream.h"
#include "cache/channel_table.h"
#include "cache/directory.h"
#include "tickwire/wire/protocol.h"

namespace tw::broker {

class MirroredChannels;

class Router {
 public:
  // The single-threaded broker's router: it owns its channels (OwnedChannels).
  Router(const RouterLimits& limits, output::Fanout& fanout, Clock clock = nullptr);
  // A router over channels `owner` keeps (a gateway's OwnedChannels), which outlives it.
  Router(output::Fanout& fanout, ChannelOwner& owner);
  ~Router();
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  // --- subscribers
  // Whether subscribe() would accept the pattern (valid, within the limit;
  // a delayed one also needs room under delay_max_bytes).
  Outcome check_subscribe(Outlet* outlet, std::string_view pattern, uint32_t delay_ms = 0) const;
  // Adds `pattern` for the outlet and sends it the image of every channel the
  // pattern newly covers; an exact pattern on an interactive service opens
  // the channel. Subscribing to a pattern it already has is a no-op (its
  // policy stays). `policy` Default means limits.default_policy. When several
  // patterns of one outlet cover a channel, the strictest policy applies
  // (disconnect > drop > conflate). `conflate_ms` > 0 asks for at most one
  // merged refresh per channel per interval (docs/ARCHITECTURE.md,
  // "Conflation"); a channel covered by several patterns of one outlet gets
  // the smallest interval, and real time (0) if any pattern is real time.
  // `delay_ms` > 0: the stream as it was that long ago ("Delay"), under its
  // own channel id (kDelayedChannelBit set), for each (channel, delay) pair.
  Outcome subscribe(Outlet* outlet, std::string_view pattern, SlowPolicy policy = SlowPolicy::Default,
                    uint32_t conflate_ms = 0, uint32_t delay_ms = 0);
  Outcome unsubscribe(Outlet* outlet, std::string_view pattern);
  // A subscription made again that asks for its retained messages again
  // (MQTT Retain Handling 0): the outlet's image of every channel with data
  // it holds through `pattern`, as Outlet::send_prior_image. Nothing is
  // unsubscribed, so no message is lost in between [MQTT-3.8.4-3].
  void resend_images(Outlet* outlet, std::string_view pattern);
  // The ACK of a subscription to `patterns` (each subscribed already). An
  // owner on this loop holds every subscription at once: OK. A mirror
  // answers pending while a gateway may not hold the interest yet; the
  // access point calls the connection's Session::settled when every one does.
  Outcome settle(Outlet* outlet, std::span<const std::string_view> patterns, uint32_t request_id);
  // Drops every subscription, publisher hold and service of a closing outlet.
  void remove_outlet(Outlet* outlet);
  // The outlet's entitlements changed (subscribers_entitle.cc): Outlet::entitled
  // answers under the new ones, `before` under the old. Channels it may no
  // longer receive are detached, each that it then no longer receives at all
  // with STATUS CLOSED NOT_AUTHORIZED; exact patterns no longer permitted are
  // dropped; channels newly permitted attach. Nothing else changes.
  using EntitledFn = Subscribers::EntitledFn;
  void reentitle(Outlet* outlet, const EntitledFn& before);
  size_t subscription_count(Outlet* outlet) const;
  // The patterns an outlet holds, as it subscribed them (the policy
  // resolved), sorted by pattern: the admin API's subscriptions view.
  std::vector<HeldSubscription> subscriptions_of(const Outlet* outlet) const;
  // Whether the outlet currently receives the channel's stream (some pattern covers it).
  bool delivers(const Outlet* outlet, cache::ChannelId id) const;
  // The policy deliveries of the channel to the outlet carry; Default when it does not receive it.
  SlowPolicy policy_of(const Outlet* outlet, cache::ChannelId id) const;
  // The conflation interval deliveries of the channel to the outlet carry; 0 = real time (or not delivered).
  uint32_t conflate_ms_of(const Outlet* outlet, cache::ChannelId id) const;
  // Sends the channel's current image as a snapshot reply (request_id != 0).
  Outcome snapshot(Outlet* outlet, std::string_view topic, uint32_t request_id);

  // --- broadcast publishers
  // Finds or creates the channel a publisher will publish to. With `by`, its
  // outlet holds the channel until remove_outlet, and may create a new one only if by->may_create.
  Outcome advertise(std::string_view topic, wire::PayloadKind kind, cache::ChannelId& out, Advertiser* by = nullptr);
  // Applies a message to the channel's cache and fans it out. The hot path.
  // A gateway passes Checked::Already for what its access point validated.
  Outcome publish(cache::ChannelId id, std::span<const uint8_t> payload, bool image,
                  fields::Checked checked = fields::Checked::No, const MessageOrigin& origin = {}) {
    owner_thread_.check("Router");
    return owner_->publish(id, payload, image, checked, origin);
  }
  // The origin of the message being fanned out now (within publish or a
  // mirror's message); empty otherwise. Outlets read it in send_delivery and
  // send_stream_image.
  const MessageOrigin& origin() const { return subscribers_->origin(); }

  // --- interactive providers
  Outcome provide(Outlet* outlet, std::string_view service, std::string_view pattern);
  Outcome withdraw(Outlet* outlet, std::string_view service);
  // A provider's message on a stream it was given. Messages for channels it
  // was not asked for are ignored and counted (stray), never applied.
  Outcome provider_publish(Outlet* outlet, cache::ChannelId id, std::span<const uint8_t> payload, bool image,
                           fields::Checked checked = fields::Checked::No);
  Outcome provider_status(Outlet* outlet, cache::ChannelId id, wire::ChannelState state, wire::Code code,
                          std::string_view text);
  // STALE or OK from a publisher of broadcast channel `id` (one the connection registered).
  Outcome publisher_status(Outlet* outlet, cache::ChannelId id, wire::ChannelState state, wire::Code code,
                           std::string_view text);

  // --- administration and time
  // Sends one ChannelInfo per channel of `service` ("" = all) to the outlet.
  // A pending Outcome when another thread answers (tiered broker).
  Outcome list_channels(Outlet* outlet, std::string_view service, uint32_t request_id);
  // The same, a page at a time, so that a large listing neither stalls the
  // loop nor outgrows the connection's output: sends the rows of the
  // channels from cursor.next on, looking at no more than `max_visits`
  // channel ids, and sets cursor.done after the last. A mirror asks the
  // page of the gateways, one after the other (pending, cursor.waiting
  // until listing_page_answered).
  Outcome list_channels_page(Outlet* outlet, ListingCursor& cursor, size_t max_visits);
  // Tiered: the gateway's page arrived (Outlet::listing_page); moves the cursor on.
  void listing_page_answered(ListingCursor& cursor, cache::ChannelId next, bool shard_done);
  // An administrator closes the channel (docs/operations.md): its
  // subscribers get STATUS CLOSED CLOSED_BY_ADMIN, exact subscriptions end, a
  // provider is released, the image goes. NotFound when there is no such
  // channel, or (a mirror) when this loop does not own it.
  Outcome close_by_admin(std::string_view topic);
  // Request timeouts, release lingers, NOT_FOUND expiry, delayed entries due, rate samples.
  void on_tick();

  // --- thread tiers (docs/ARCHITECTURE.md, "Threads")
  // Access point: from now on this router mirrors channels owned by
  // gateways; what changes a channel goes upstream, subscriptions and
  // fan-out stay here. Before any subscription. The gateways' records go to
  // the mirror returned (tier/access_point_link.cc).
  MirroredChannels& attach_upstream(Upstream* upstream);
  bool is_mirror() const {
    owner_thread_.check("Router");
    return owner_->mirrors();
  }
  // Gateway: the outlet (an access point) stands for `count` subscribers of the channel, for listings.
  void set_weight(const Outlet* outlet, cache::ChannelId id, uint32_t count);

  // Loop-local: other threads read the loop's published snapshot (tier/loop_snapshot.h).
  const RouterStats& stats() const {
    owner_thread_.check("Router");
    return owner_->stats();
  }
  // The channels this loop delivers: its own, or a mirror's copies.
  size_t channel_count() const {
    owner_thread_.check("Router");
    return owner_->table().size();
  }
  // A delayed stream's id gives its delayed copy of the channel.
  cache::Channel* channel(cache::ChannelId id) {
    owner_thread_.check("Router");
    return subscribers_->channel(id);
  }
  // Delayed streams ((channel, delay) pairs recorded) and the bytes their recordings hold.
  size_t delayed_stream_count() const {
    owner_thread_.check("Router");
    return subscribers_->delayed_stream_count();
  }
  size_t delayed_bytes() const {
    owner_thread_.check("Router");
    return subscribers_->delayed_bytes();
  }
  // Channels currently served by providers of `service`, per provider name.
  std::vector<std::pair<std::string, uint32_t>> provider_loads(std::string_view service) const;
  // The loop thread takes the router and its channel table when it starts.
  void claim_owner();
  // Before the loop runs: called with each subscription a pattern gains or
  // loses, where this router owns its channels (a broker link's interest:
  // tier/broker_link.h); a mirror's owner ignores it (its gateways see it).
  void on_interest(std::function<void(std::string_view, bool)> fn);

 private:
  // Serves `owner`'s channels from now on, with a subscriber side of its own.
  void plug(ChannelOwner& owner);

  output::Fanout& fanout_;
  std::unique_ptr<ChannelOwner> owned_;  // the owner, when this router keeps it
  ChannelOwner* owner_ = nullptr;        // never null once constructed
  std::unique_ptr<Subscribers> subscribers_;
  [[no_unique_address]] OwnerThread owner_thread_;
};

}  // namespace tw::broker
