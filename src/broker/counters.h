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
  uint64_t channel_quota_hits = 0;     // REGISTERs refused: max_channels_per_connection (CHANNEL_QUOTA)
  uint64_t user_channel_quota_hits = 0;  // REGISTERs refused: the user's max_channels (CHANNEL_QUOTA)
  uint64_t stray_provider_messages = 0;  // provider messages for channels it was not asked for
  // Input bounds (docs/configuration.md, "Limits"):
  uint64_t partial_input_bytes = 0;    // gauge: bytes held in partial frames now (limits.max_partial_input)
  uint64_t partial_input_closes = 0;   // connections closed because the partial frames passed max_partial_input
  uint64_t frame_deadline_closes = 0;  // connections closed with a frame not whole within frame_deadline_ms
  uint64_t fd_exhausted = 0;           // connections refused because the process was out of file descriptors
  uint64_t auth_failures = 0;          // logins refused (wrong password, unknown user, none given)
  uint64_t entitlement_refusals = 0;   // SUBSCRIBE, REGISTER, PROVIDE refused by entitlements
  uint64_t withdrawn_publishes = 0;    // PUBLISHes dropped on publish ids withdrawn by a reload
};

}  // namespace tw::broker
