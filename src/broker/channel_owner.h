// The seam between a router's two parts (docs/ARCHITECTURE.md, "The router's
// roles"): the subscriber side (Subscribers: patterns, per-channel subscriber
// entries, fan-out) and the owner of the channels it delivers.
//
//   - Interest is what the subscriber side tells the owner: which patterns
//     it holds, which channels its subscriptions cover, which outlets went.
//   - The owner hands the subscriber side channel events in return (a new
//     channel, a message, a status, the end of a stream, a freed channel):
//     Subscribers' public methods.
//
// Two owners plug in: OwnedChannels owns the channels (the single-threaded
// broker's loop, a gateway), MirroredChannels keeps copies of channels that
// gateways own and sends what changes them upstream (an access point).
#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <string>
#include <vector>

#include "broker/outlet.h"
#include "broker/router_limits.h"
#include "cache/channel.h"
#include "cache/channel_table.h"
#include "tickwire/wire/protocol.h"

namespace tw::broker {

class Subscribers;

class Interest {
 public:
  virtual ~Interest() = default;
  // The first subscription to `pattern` was added (add) or the last one removed.
  virtual void interest(std::string_view pattern, bool add) = 0;
  // `by` subscribed to the exact topic (its pattern's channels are attached
  // already): an interactive service's channel opens. Not ok: the
  // subscription cannot stand, and the subscriber side takes it back.
  virtual Outcome open(Outlet* by, std::string_view topic) = 0;
  // A subscription pattern now covers the channel (`exact`: an exact one;
  // `new_subscriber`: its outlet did not receive the channel before).
  virtual void attached(cache::Channel& ch, bool exact, bool new_subscriber) = 0;
  // A subscription pattern no longer covers the channel.
  virtual void detached(cache::Channel& ch, bool exact) = 0;
  // The outlet closes: what it published or provided goes (its subscriptions go next).
  virtual void outlet_gone(Outlet* outlet) = 0;
  // The ACK of a subscription to `patterns` (Router::settle): pending when
  // the owner may not hold the interest yet.
  virtual Outcome settle(Outlet* outlet, std::span<const std::string_view> patterns, uint32_t request_id) = 0;
};

// What publishers, providers and administrators ask of the owner (through
// the Router), with Interest; topics and services are validated already.
class ChannelOwner : public Interest {
 public:
  ChannelOwner(const RouterLimits& limits, Clock clock);
  const RouterLimits& limits() const { return limits_; }
  const Clock& clock() const { return clock_; }
  // The channels this owner's subscriber side delivers: its own, or its copies.
  virtual cache::ChannelTable& table() = 0;
  virtual RouterStats& stats() = 0;
  // Hands channel events to `subscribers` from now on (the Router binds them once).
  virtual void serve(Subscribers& subscribers) = 0;
  // The loop thread takes the owner (and its table) when it starts.
  virtual void claim_owner() { table().claim_owner(); }

  virtual Outcome advertise(std::string_view topic, wire::PayloadKind kind, cache::ChannelId& out,
                            Advertiser* by) = 0;
  virtual Outcome publish(cache::ChannelId id, std::span<const uint8_t> payload, bool image,
                          fields::Checked checked, const MessageOrigin& origin) = 0;
  virtual Outcome provide(Outlet* outlet, std::string_view service, std::string_view pattern) = 0;
  virtual Outcome withdraw(Outlet* outlet, std::string_view service) = 0;
  virtual Outcome provider_publish(Outlet* outlet, cache::ChannelId id, std::span<const uint8_t> payload,
                                   bool image, fields::Checked checked) = 0;
  virtual Outcome provider_status(Outlet* outlet, cache::ChannelId id, wire::ChannelState state,
                                  wire::Code code, std::string_view text) = 0;
  // A publisher's word on a broadcast channel it registered (STALE or OK): a
  // broker link's, for what it brings in (docs/protocol.md, STREAM_STATUS).
  virtual Outcome publisher_status(Outlet*, cache::ChannelId, wire::ChannelState, wire::Code, std::string_view) {
    return {wire::Code::NotFound, "channel status from a publisher is not served here"};
  }
  virtual Outcome snapshot(Outlet* outlet, std::string_view topic, uint32_t request_id) = 0;
  // One page of a listing (Router::list_channels_page).
  virtual Outcome list_channels_page(Outlet* outlet, ListingCursor& cursor, size_t max_visits) = 0;
  // How many owners a listing goes through, one after the other.
  virtual uint32_t listing_shards() const = 0;
  virtual Outcome close_by_admin(std::string_view topic) = 0;
  virtual void on_tick(uint64_t now) = 0;
  virtual std::vector<std::pair<std::string, uint32_t>> provider_loads(std::string_view service) const = 0;
  // Whether the channels are copies of channels that other threads own.
  virtual bool mirrors() const = 0;

 protected:
  const RouterLimits limits_;
  const Clock clock_;
};

}  // namespace tw::broker
