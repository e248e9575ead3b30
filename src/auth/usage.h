// Usage accounting per user (docs/security.md, "Usage accounting"): what
// exchanges ask a distributor to report. Counted per session by its loop
// thread (plain adds, no lock: the same cost as the broker's own counters),
// handed to the Authority once per tick as deltas, and written by the
// verifier thread to the usage log once per interval.
#pragma once
#include <cstdint>

namespace tw::auth {

struct Usage {
  uint64_t logins = 0;         // connections opened as this user
  uint64_t subscriptions = 0;  // SUBSCRIBEs accepted
  uint64_t channels = 0;       // channel streams started (a channel's first image to a connection)
  uint64_t messages = 0;       // stream messages offered (images and updates)
  uint64_t bytes = 0;          // bytes written to the connection

  bool empty() const { return (logins | subscriptions | channels | messages | bytes) == 0; }
  void add(const Usage& o) {
    logins += o.logins;
    subscriptions += o.subscriptions;
    channels += o.channels;
    messages += o.messages;
    bytes += o.bytes;
  }
};

}  // namespace tw::auth
