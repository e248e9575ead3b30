// Upstream: what an access point's router (a mirror) hands to the gateways
// that own the channels, in a tiered broker (docs/ARCHITECTURE.md, "Threads").
// The mirror router keeps subscriptions, a copy of each subscribed channel's
// cache and the fan-out; everything that changes a channel goes upstream.
// Calls never block: they queue a record for another thread.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

#include "broker/outlet.h"
#include "cache/channel.h"
#include "tickwire/wire/protocol.h"

namespace tw::broker {

class Upstream {
 public:
  virtual ~Upstream() = default;
  // The first local subscription to `pattern` was added (add) or the last one removed.
  virtual void interest(std::string_view pattern, bool add) = 0;
  // The outlet's subscription to `patterns` (held here already) is being
  // acknowledged: false when every gateway they concern has applied their
  // interest; true when some may not have, and the access point tells the
  // connection (Session::settled) once they all have, naming `request_id`
  // (docs/ARCHITECTURE.md, "A subscription across the tiers").
  virtual bool settle(Outlet* outlet, std::span<const std::string_view> patterns, uint32_t request_id) = 0;
  // Names the channel broker-wide (synchronous: it only reads the directory).
  virtual Outcome advertise(std::string_view topic, wire::PayloadKind kind, cache::ChannelId& out,
                            Advertiser* by = nullptr) = 0;
  // Checks what can be checked here (a field list is well formed), then forwards.
  virtual Outcome publish(cache::ChannelId id, std::span<const uint8_t> payload, bool image,
                          const MessageOrigin& origin) = 0;
  virtual Outcome provide(Outlet* outlet, std::string_view service, std::string_view pattern) = 0;
  virtual Outcome withdraw(Outlet* outlet, std::string_view service) = 0;
  virtual void provider_publish(Outlet* outlet, cache::ChannelId id, std::span<const uint8_t> payload,
                                bool image) = 0;
  virtual void provider_status(Outlet* outlet, cache::ChannelId id, wire::ChannelState state, wire::Code code,
                               std::string_view text) = 0;
  // STALE or OK from the publisher of broadcast channel `id` (Router::publisher_status).
  virtual void publisher_status(Outlet*, cache::ChannelId, wire::ChannelState, wire::Code, std::string_view) {}
  // Answered later through outlet->send_image / complete_request.
  virtual void snapshot(Outlet* outlet, std::string_view topic, uint32_t request_id) = 0;
  // One page of a listing: the rows of gateway `shard`'s channels from id
  // `from` on, a bounded number of ids, then outlet->listing_page says where
  // that gateway stopped.
  virtual void list_channels(Outlet* outlet, std::string_view service, uint32_t request_id, uint32_t shard,
                             cache::ChannelId from) = 0;
  // How many gateways a listing goes through, one after the other.
  virtual uint32_t shards() const = 0;
  virtual void outlet_gone(Outlet* outlet) = 0;
  // How many local outlets receive the channel now (for channel listings).
  virtual void subscribers_changed(cache::ChannelId id, uint32_t count) = 0;
};

}  // namespace tw::broker
