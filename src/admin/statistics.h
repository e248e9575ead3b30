// Statistics: the broker's live numbers for the admin side (docs/operations.md),
// gathered off the hot path. Totals and per-loop counts come from the loops'
// published snapshots (tier/loop_snapshot.h, any thread, never waits on a
// loop); per-connection and per-channel rows are asked of the loops that own
// them (tier/loop_inbox.h: answered on their next tick), only when someone
// asks. Rates are computed here, from successive samples.
//
// Thread-safe: the HTTP listener's thread calls it, possibly for several
// requests (metrics, events, top) in a row; samples are shared between them.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "auth/usage.h"
#include "tickwire/client/client.h"
#include "tier/broker.h"
#include "tier/loop_inbox.h"
#include "tickwire/wire/protocol.h"

namespace tw::admin {

struct LoopSample {
  std::string name;
  std::string role;
  tier::LoopSnapshot snapshot;
};

// The connections' part of a sample (asked of the access points).
struct ConnectionSummary {
  uint64_t open = 0;  // connections open now (past their hello or not)
  std::map<std::string, uint64_t> by_protocol;  // of those: per protocol of the broker's table, 0 when none
  uint64_t subscriptions = 0;
  uint64_t slow = 0;
};

struct Sample {
  uint64_t mono_ns = 0;
  uint64_t wall_ms = 0;
  tier::LoopSnapshot totals;
  std::vector<LoopSample> loops;
  std::optional<ConnectionSummary> connections;  // nullopt: an access point did not answer in time
  std::map<std::string, auth::Usage> users;      // usage per user since start, with usage accounting on
  uint64_t auth_source_refusals = 0;             // logins refused past auth_max_pending_per_source
};

struct LoopRates {
  double busy = 0;         // fraction of the interval spent in turns
  double turns_per_s = 0;
};

// Per second, between two samples.
struct Rates {
  double msgs_in = 0;
  double msgs_out = 0;
  double bytes_in = 0;
  double bytes_out = 0;
  std::vector<LoopRates> loops;
};

// One channel as a listing shows it: the client library's row (LIST_CHANNELS), filled on the owner's loop.
using ChannelRow = client::ChannelRow;

struct ServiceRow {
  std::string name;  // the topic's first level
  uint64_t channels = 0;
  uint64_t subscribers = 0;
  uint64_t rate = 0;
  std::vector<std::string> providers;
};

class Statistics {
 public:
  explicit Statistics(tier::Broker& broker);

  // A new sample now: the snapshots and the connections' summary.
  Sample sample() const;
  // The latest sample and the rates since the one before it; a new sample is
  // taken when the latest is older than `max_age_ms` (several readers share one).
  struct View {
    Sample now;
    Rates rates;
    uint64_t uptime_ms = 0;
  };
  View current(uint64_t max_age_ms = 900);

  std::optional<std::vector<tier::ConnectionInfo>> connections() const;
  // Channels whose topic starts with `prefix`, sorted by topic.
  std::optional<std::vector<ChannelRow>> channels(const std::string& prefix) const;
  static std::vector<ServiceRow> services(const std::vector<ChannelRow>& channels);

  tier::Broker& broker() const { return broker_; }
  uint64_t start_wall_ms() const { return start_wall_ms_; }

 private:
  static Rates rates_between(const Sample& before, const Sample& after);

  tier::Broker& broker_;
  const uint64_t start_mono_ns_;
  const uint64_t start_wall_ms_;
  std::mutex mutex_;  // the two samples below
  std::optional<Sample> previous_;
  std::optional<Sample> latest_;
};

// Every access point's inbox (the loops that own connections), with its index among them.
std::vector<tier::LoopInbox*> access_point_inboxes(const tier::Broker& broker);
// The inboxes of the loops that own channels: the single loop, or every gateway.
std::vector<tier::LoopInbox*> owner_inboxes(const tier::Broker& broker);
tier::LoopInbox& inbox_of(const tier::Broker::Loop& loop);
broker::Router& router_of(const tier::Broker::Loop& loop);

}  // namespace tw::admin
