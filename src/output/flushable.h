// Flushable: what the turn's end flushes (Fanout::flush_all): a connection,
// or a gateway's stand-in for an access point, with output queued this turn.
#pragma once

namespace tw::output {

class Flushable {
 public:
  // Writes queued output; called once per loop turn, or when the arena fills.
  virtual void flush_output() = 0;

  bool dirty = false;  // owned by Fanout: listed for this turn's flush

 protected:
  ~Flushable() = default;
};

}  // namespace tw::output
