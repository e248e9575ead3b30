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
  uint64_t slow_consumers = 0;         // disconnected past max_output_buffer (policy disconnect)
  // Slow consumers kept connected (policies conflate and drop):
  uint64_t conflated_channels = 0;     // channels put in a connection's lag set (one per episode)
  uint64_t refresh_images = 0;         // images sent to resume a conflated channel
  uint64_t dropped_messages = 0;       // stream messages discarded (policy drop)
  uint64_t drop_notices = 0;           // STATUS MESSAGES_DROPPED sent
  uint64_t conflation_refreshes = 0;   // merged images of conflated subscriptions (conflate_ms)
  uint64_t idle_timeouts = 0;
  uint64_t subscription_limit_hits = 0;
  uint64_t stray_provider_messages = 0;  // provider messages for channels it was not asked for
  uint64_t auth_failures = 0;          // logins refused (wrong password, unknown user, none given)
  uint64_t entitlement_refusals = 0;   // SUBSCRIBE, REGISTER, PROVIDE refused by entitlements
  uint64_t withdrawn_publishes = 0;    // PUBLISHes dropped on publish ids withdrawn by a reload
};

}  // namespace tw::broker
