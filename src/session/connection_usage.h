// ConnectionUsage: what one connection did, counted since it opened (the
// admin view shows it) and handed to its user's accounting (auth/usage.h) as
// what grew since the last report. Owned by the connection's loop thread.
#pragma once
#include <cstdint>

#include "auth/usage.h"

namespace tw::session {

class ConnectionUsage {
 public:
  // What the admin view shows (tier::ConnectionInfo): counts since the connection opened.
  struct Traffic {
    uint64_t frames_in = 0;
    uint64_t bytes_in = 0;
    uint64_t messages_out = 0;  // stream messages offered (images and updates)
    uint64_t bytes_out = 0;
  };

  void read(uint64_t bytes) { bytes_in_ += bytes; }
  void parsed(uint64_t frames) { frames_in_ += frames; }
  void written(uint64_t bytes) { usage_.bytes += bytes; }
  void logged_in() { ++usage_.logins; }
  void subscribed() { ++usage_.subscriptions; }
  // One stream message offered; `starts_stream`: the image that starts a channel's stream.
  void offered(bool starts_stream) {
    usage_.channels += starts_stream;
    ++usage_.messages;
  }

  Traffic traffic() const { return {frames_in_, bytes_in_, usage_.messages, usage_.bytes}; }
  // What grew since the last call.
  auth::Usage take() {
    const auth::Usage delta{usage_.logins - reported_.logins, usage_.subscriptions - reported_.subscriptions,
                            usage_.channels - reported_.channels, usage_.messages - reported_.messages,
                            usage_.bytes - reported_.bytes};
    reported_ = usage_;
    return delta;
  }

 private:
  auth::Usage usage_;     // since the connection opened
  auth::Usage reported_;  // what take() handed out so far
  uint64_t frames_in_ = 0;  // counted per read (the loop counter's growth), not per frame
  uint64_t bytes_in_ = 0;
};

}  // namespace tw::session
