// DeliveryPolicy: what one connection is sent of its subscriptions' streams,
// and when, whatever its protocol (docs/ARCHITECTURE.md, "Slow consumers"
// and "Conflation"). It asks the connection's Encoder for the bytes.
//
// Slow consumers. A connection whose queue is over max_output_buffer is
// "congested": deliveries under the conflate policy only record their
// channel in the lag set, deliveries under the drop policy are counted per
// channel, and a delivery under the disconnect policy that would still be
// queued ends the connection (Verdict::SlowConsumer). When the queue drains
// to half the bound, resume() sends each conflated channel's current image
// (a refresh) and each dropping channel a gap notice (MESSAGES_DROPPED), and
// normal delivery continues. Memory is bounded by the queue bound plus one
// entry per channel, whatever the publish rate.
//
// Conflated subscriptions (conflate_ms > 0). A delivery is not queued: its
// channel gets a due time (first held message + interval), and the first
// tick at or after it sends the channel's current image as a refresh: every
// field's latest value, all held updates merged. The cache already holds the
// merged state, so the policy keeps one node per channel, nothing per message.
//
// Own copies and acknowledged windows. A protocol may write some deliveries
// itself, per connection, instead of queuing the shared frames (OwnCopies:
// MQTT's packet ids, subscription identifiers, topic aliases); an own copy
// with a level (MQTT's QoS 1 and 2) goes into the protocol's in-flight
// window and stays there until the client acknowledges it. A full window is
// treated like an output over its bound, for the channels that need it:
// conflate holds the channel for a refresh once a slot frees, drop counts,
// disconnect ends the connection. The protocol calls resume() when an
// acknowledgement frees a slot. Held-back channels resume in the order they
// were held.
//
// Owned by the connection's loop thread.
#pragma once
#include <cstdint>
#include <deque>
#include <span>
#include <string_view>
#include <unordered_map>

#include "broker/counters.h"
#include "broker/outlet.h"
#include "broker/router.h"
#include "reactor/reactor.h"
#include "session/encoder.h"
#include "output/output.h"

namespace tw::session {

using broker::SlowPolicy;

// How one delivery reaches the connection.
struct Copy {
  bool own = false;   // written by the protocol for this connection (OwnCopies), not the shared frames
  uint8_t level = 0;  // own only: > 0 goes into the acknowledged window (MQTT: the QoS)
  bool acknowledged() const { return level > 0; }
};

// The protocol's side of own copies. The default sends nothing of its own.
class OwnCopies {
 public:
  static OwnCopies& none();
  // How the channel's messages reach the connection now (for a refresh of a held-back channel).
  virtual Copy copy_of(const cache::Channel&) { return {}; }
  virtual bool window_full() const { return false; }
  // The message whose shared encoding is `frame`, as this connection's own copy.
  virtual void send_copy(const cache::Channel&, std::span<const uint8_t> /*frame*/, Copy) {}
  // The channel's current image the same way.
  virtual void send_copy_image(const cache::Channel&, Copy) {}

 protected:
  ~OwnCopies() = default;
};

class DeliveryPolicy {
 public:
  struct Env {
    uint64_t max_output_buffer;
    broker::Router& router;
    broker::Counters& counters;
    const reactor::Reactor& clock;  // the turn's time, for conflation due times
  };
  // What the connection must do after a call: keep going, or close as a slow consumer.
  enum class Verdict { Keep, SlowConsumer };

  DeliveryPolicy(Env env, output::Output& output, const Encoder& encoder, broker::Outlet& self)
      : env_(env), output_(output), encoder_(&encoder), self_(self) {}
  // A protocol whose encoding is fixed only by its handshake (MQTT's
  // version, in CONNECT) sets it then, before any subscription.
  void set_encoder(const Encoder& encoder) { encoder_ = &encoder; }
  // A protocol that writes own copies (the connection outlives the policy's use of it).
  void set_own_copies(OwnCopies& copies) { copies_ = &copies; }

  // A snapshot reply (or an image outside any stream): one that leaves the
  // queue over the bound ends the connection.
  [[nodiscard]] Verdict send_image(const cache::Channel& channel, uint32_t request_id);
  // The image that starts (or restarts) a stream, under its subscription's policy.
  [[nodiscard]] Verdict send_stream_image(const cache::Channel& channel, SlowPolicy policy, Copy copy = {});
  [[nodiscard]] Verdict send_delivery(const broker::Delivery& delivery, Copy copy = {});
  void send_status(const cache::Channel& channel, wire::ChannelState state, wire::Code code, std::string_view text,
                   bool introduce);
  // Called after each write, and when an acknowledgement frees a window
  // slot: when the queue has drained to the low-water mark, queues held-back
  // refreshes and gap notices as copies (never in the arena: this runs
  // inside the turn's flush), in the order they were held, until the queue
  // is at its bound or a refresh waits for the window. True when it queued
  // some: write again.
  bool resume();
  // On the tick: conflated refreshes whose interval has passed.
  [[nodiscard]] Verdict send_due_refreshes(uint64_t now_ns);

  // This connection's slow-consumer history.
  struct Stats {
    uint64_t conflated_channels = 0;  // conflation episodes: a channel put in the lag set (again after each resume)
    uint64_t refresh_images = 0;      // images sent to resume them
    uint64_t dropped_messages = 0;    // policy drop
    uint64_t drop_notices = 0;        // STATUS MESSAGES_DROPPED sent
    bool disconnected = false;        // ended as a slow consumer
  };
  const Stats& stats() const { return stats_; }
  size_t lagging_channels() const { return lag_.size(); }
  // Conflated channels with updates held for their next refresh.
  size_t conflation_pending() const;
  // Whether the tick may have work here (lagging or conflated channels).
  bool needs_tick() const { return !lag_.empty() || !conflated_.empty(); }
  uint64_t conflation_refreshes() const { return conflation_refreshes_; }

 private:
  // A channel whose stream is held back while the connection is over its bound.
  struct Lag {
    bool refresh = false;    // conflate: send the current image on resume
    bool introduce = false;  // the held image was the stream's first: the introduction precedes it
    uint64_t dropped = 0;    // drop: messages discarded, announced on resume
  };
  // A channel of a conflated subscription. Kept after its refresh, so a busy
  // channel costs one node for the connection's life, not one per interval.
  struct Conflated {
    uint64_t due_ns = 0;  // when the merged refresh goes out; 0 = nothing held
    SlowPolicy policy = SlowPolicy::Conflate;
  };

  bool over_bound() const { return output_.queued_bytes() > env_.max_output_buffer; }
  Verdict slow_consumer() {
    stats_.disconnected = true;
    return Verdict::SlowConsumer;
  }
  // After queuing under `policy`: over the bound, disconnect ends the
  // connection, the others hold back what follows.
  Verdict after_queued(SlowPolicy policy);
  // True when the message must not be queued now (lagging channel or congested connection).
  bool hold_back(const cache::Channel& channel, SlowPolicy policy);
  void start_lag(cache::ChannelId id, Lag lag);
  Lag& add_lag(cache::ChannelId id, Lag lag);
  // The acknowledged window is full: the subscription's policy applies, as to an output over its bound.
  Verdict hold_for_window(cache::ChannelId id, SlowPolicy policy, bool introduce);
  bool waits_for_window(Copy copy) const { return copy.acknowledged() && copies_->window_full(); }
  // The channel's current image, as its messages reach the connection now;
  // false (nothing sent) while that is through a full window.
  bool refresh(const cache::Channel& channel, bool introduce);
  void queue_image(const cache::Channel& channel, uint32_t request_id, bool introduce);
  void copy_image(const cache::Channel& channel, bool introduce);
  void copy_drop_notice(const cache::Channel& channel, uint64_t dropped);
  void hold_for_interval(const broker::Delivery& delivery);
  // A real-time delivery of a channel with held updates (a real-time pattern
  // was added): the refresh goes now, carrying this message too.
  bool release_interval_hold(const broker::Delivery& delivery, Verdict& verdict);
  Verdict send_interval_refresh(cache::ChannelId id, SlowPolicy policy);

  Env env_;
  output::Output& output_;
  const Encoder* encoder_;
  broker::Outlet& self_;
  OwnCopies* copies_ = &OwnCopies::none();
  bool congested_ = false;  // over the bound: conflate/drop deliveries are held back until the low-water mark
  std::unordered_map<cache::ChannelId, Lag> lag_;
  std::deque<cache::ChannelId> lag_order_;  // lag_'s channels, in the order they were held
  std::unordered_map<cache::ChannelId, Conflated> conflated_;
  uint64_t conflation_refreshes_ = 0;
  Stats stats_;
};

}  // namespace tw::session
