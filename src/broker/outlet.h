// Outlet: what the router delivers to. Each protocol adapter (native today;
// MQTT and WebSocket later) implements it for its connections, so the router
// knows channels and subscribers, never sockets or encodings.
#pragma once
#include <cstdint>
#include <span>

#include "cache/channel.h"

namespace tw::broker {

// One message of a channel's stream, as the router fans it out.
struct Delivery {
  const cache::Channel& channel;
  bool image;                                 // a full refresh (publisher sent an image)
  std::span<const uint8_t> payload;           // the published payload
  std::span<const uint8_t> native_frame;      // UPDATE/IMAGE frame, encoded once in the turn's arena
};

class Outlet {
 public:
  virtual ~Outlet() = default;
  // Introduces the channel (topic) if needed and sends its current image.
  // request_id 0: the image that starts a subscription stream; otherwise a snapshot reply.
  virtual void send_image(const cache::Channel& channel, uint32_t request_id) = 0;
  // Queues one stream message. Must not reserve arena space (the router
  // holds a frame in the arena while it calls this) and must not call back
  // into the router: a connection that has to close only marks itself.
  virtual void send_delivery(const Delivery& delivery) = 0;
  // Writes queued output; called once per loop turn, or when the arena fills.
  virtual void flush_output() = 0;

  bool dirty = false;  // owned by Fanout
};

}  // namespace tw::broker
