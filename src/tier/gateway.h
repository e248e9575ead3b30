// Gateway: a thread that owns a shard of the channels (their cache, their
// sequence numbers, their providers) and routes them to the access points
// that subscribe (docs/ARCHITECTURE.md, "Threads"). It has no sockets: every
// connection lives on an access point, and reaches the gateway over a Link.
#pragma once
#include <atomic>
#include <memory>
#include <vector>

#include "output/fanout.h"
#include "broker/owned_channels.h"
#include "broker/router.h"
#include "cache/directory.h"
#include "config/config.h"
#include "reactor/reactor.h"
#include "tier/link.h"
#include "tier/loop_inbox.h"
#include "tier/loop_snapshot.h"

namespace tw::tier {

class Gateway {
 public:
  // congested_backlog: bytes spilled towards one access point above which the
  // gateway stops reading its input (docs/ARCHITECTURE.md, "Backpressure").
  Gateway(const config::BrokerConfig& config, broker::RouterLimits limits, cache::ChannelDirectory& directory,
          size_t congested_backlog = 64u << 20);
  ~Gateway();
  // One link per access point, in access point order; wakers[i] wakes access point i.
  void connect(std::vector<Link*> links, std::vector<Waker*> wakers);
  // The thread's loop, until stop is set (and the waker notified). The
  // calling thread becomes the owner of everything the gateway holds.
  void run(const std::atomic<bool>& stop);
  Waker& waker() { return waker_; }
  // Before run(): the provider loads all gateways of the broker share (broker/provider_loads.h).
  void share_provider_loads(broker::ProviderLoads& loads) { channels_.share_provider_loads(loads); }
  // Any thread: the counts as of the loop's last tick (or its end); a gateway has no connection counters.
  LoopSnapshot snapshot() const { return published_.read(); }
  // Administration (src/admin): jobs run on this loop's tick; router() only from such a job.
  LoopInbox& inbox() { return inbox_; }
  broker::Router& router() { return router_; }

 private:
  class Port;
  bool drain_inbound();
  // Bytes spilled towards the access point furthest behind.
  size_t largest_backlog() const;
  bool has_ring_input() const;
  void end_of_turn();
  void tick();
  void publish_snapshot();

  reactor::Reactor reactor_;
  Waker waker_{reactor_};
  output::Fanout fanout_;
  broker::OwnedChannels channels_;  // this shard's, named by the shared directory
  broker::Router router_;
  std::vector<std::unique_ptr<Port>> ports_;
  size_t congested_backlog_;
  PublishedSnapshot published_;
  LoopInbox inbox_;
};

}  // namespace tw::tier
