// Uplink: an access point's side of its links to the gateways. It is the
// mirror router's Upstream: it names channels in the shared directory and
// sends each request to the gateway that owns the channel (or to all of them
// for wildcards and providers; a listing to each in turn, a page at a time),
// as records on the links.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "broker/upstream.h"
#include "cache/directory.h"
#include "tier/link.h"

namespace tw::tier {

class Uplink final : public broker::Upstream {
 public:
  Uplink(cache::ChannelDirectory& directory, std::vector<Link*> links, std::vector<Waker*> wakers);

  void interest(std::string_view pattern, bool add) override;
  bool settle(broker::Outlet* outlet, std::span<const std::string_view> patterns, uint32_t request_id) override;
  broker::Outcome advertise(std::string_view topic, wire::PayloadKind kind, cache::ChannelId& out,
                            broker::Advertiser* by = nullptr) override;
  broker::Outcome publish(cache::ChannelId id, std::span<const uint8_t> payload, bool image,
                          const broker::MessageOrigin& origin) override;
  broker::Outcome provide(broker::Outlet* outlet, std::string_view service, std::string_view pattern) override;
  broker::Outcome withdraw(broker::Outlet* outlet, std::string_view service) override;
  void provider_publish(broker::Outlet* outlet, cache::ChannelId id, std::span<const uint8_t> payload,
                        bool image) override;
  void provider_status(broker::Outlet* outlet, cache::ChannelId id, wire::ChannelState state, wire::Code code,
                       std::string_view text) override;
  void publisher_status(broker::Outlet* outlet, cache::ChannelId id, wire::ChannelState state, wire::Code code,
                        std::string_view text) override;
  void snapshot(broker::Outlet* outlet, std::string_view topic, uint32_t request_id) override;
  void list_channels(broker::Outlet* outlet, std::string_view service, uint32_t request_id, uint32_t shard,
                     cache::ChannelId from) override;
  uint32_t shards() const override { return static_cast<uint32_t>(links_.size()); }
  void outlet_gone(broker::Outlet* outlet) override;
  void subscribers_changed(cache::ChannelId id, uint32_t count) override;

  // Gateway `gateway` answered a Settle; true when the request it belongs to
  // has every answer (then the connection `r.token` sends its ACK).
  bool settled(uint32_t gateway, const Record& r);
  // A gateway finished its part of a request; true when every gateway it went to has.
  bool request_done(uint32_t token, uint32_t request_id);
  // End of the access point's turn: spilled records into the rings, gateways woken.
  void flush();
  // Records waiting for ring space (the access point stops reading sockets past a bound).
  size_t backlog() const;
  // Inbound rings (gateway -> this access point), one per gateway.
  std::vector<Link*>& links() { return links_; }

 private:
  Pipe& to(uint32_t gateway) { return links_[gateway]->to_gateway; }
  void send(uint32_t gateway, const Record& r);
  void send_status(broker::Outlet* outlet, cache::ChannelId id, wire::ChannelState state, wire::Code code,
                   std::string_view text, uint8_t flags);
  void send_all(const Record& r);
  void send_awaited(uint32_t gateway, const Record& r);
  void send_awaited_all(const Record& r);
  void release_holds(uint32_t token);

  cache::ChannelDirectory& directory_;
  std::vector<Link*> links_;
  std::vector<Waker*> wakers_;
  std::vector<bool> touched_;  // gateways sent to this turn
  std::vector<uint8_t> kinds_;  // by channel id: 0 = not advertised here yet, else kind + 1
  std::unordered_map<uint32_t, std::vector<std::string>> provided_;  // token -> services
  // token -> the channels its REGISTERs hold in the directory (id -> topic), released when it goes.
  std::unordered_map<uint32_t, std::unordered_map<cache::ChannelId, std::string>> held_;
  std::unordered_map<uint64_t, uint32_t> awaiting_;  // (token, request id) -> gateways still to answer
  // Per gateway: Interest, Provide and Withdraw records sent, and how many of them it has applied
  // as far as its last Settled says (both wrap around; equal: none in flight).
  std::vector<uint32_t> awaited_sent_;
  std::vector<uint32_t> awaited_applied_;
  std::vector<bool> concerned_;  // settle's scratch: the gateways a subscription's patterns live on
  std::unordered_map<uint64_t, uint32_t> settling_;  // (token, request id) -> Settled still to come
};

}  // namespace tw::tier
