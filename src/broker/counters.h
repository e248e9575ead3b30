// Broker counters. Written only by the loop thread; a reader on another
// thread sees approximate values (no torn 64-bit reads on x86-64).
#pragma once
#include <cstdint>

namespace tw::broker {

struct Counters {
  uint64_t connections_accepted = 0;
  uint64_t connections_rejected = 0;   // past max_connections
  uint64_t connections_open = 0;
  uint64_t frames_in = 0;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  uint64_t protocol_errors = 0;        // malformed, unknown, invalid: client disconnected
  uint64_t slow_consumers = 0;         // disconnected past max_output_buffer
  uint64_t idle_timeouts = 0;
  uint64_t subscription_limit_hits = 0;
  uint64_t stray_provider_messages = 0;  // provider messages for channels it was not asked for
};

}  // namespace tw::broker
