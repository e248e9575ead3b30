// LoopSnapshot: what one loop thread has counted, as of its last tick.
// Counters, LoopStats and RouterStats are plain loop-local structs that only
// the loop touches; every tick (and once more when the loop ends) the loop
// copies them into its Seqlock, and any other thread reads that copy
// (Broker::totals, the shutdown summary, the admin listener: src/admin).
#pragma once
#include "base/seqlock.h"
#include "broker/counters.h"
#include "broker/router.h"
#include "reactor/reactor.h"

namespace tw::tier {

struct LoopSnapshot {
  broker::Counters counters;
  reactor::LoopStats loop;
  broker::RouterStats router;
  uint64_t channels = 0;  // gauge: channels this loop owns now (a mirror's copies are not counted)
};

using PublishedSnapshot = Seqlock<LoopSnapshot>;

// Adds `part` into `total`: every count is summed, the longest turn is the longest of either.
void add_to(LoopSnapshot& total, const LoopSnapshot& part);

}  // namespace tw::tier
