// NativeSession: one connection speaking the native protocol (docs/protocol.md).
// It is the protocol adapter: it splits and decodes frames, drives the
// handshake, heartbeats and limits, and turns requests into Router calls;
// as an Outlet it encodes what the router delivers.
//
// Lifecycle: AwaitHello -> Open -> Closing. A session that must close (bad
// input, timeout, slow consumer, peer gone) only marks itself Closing; the
// broker reaps it at the end of the loop turn, so no callback ever sees a
// destroyed session. Owned by the broker's loop thread.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "broker/counters.h"
#include "broker/fanout.h"
#include "broker/router.h"
#include "config/config.h"
#include "io/out_queue.h"
#include "reactor/reactor.h"
#include "session/transport.h"
#include "wire/codec.h"

namespace tw::broker {

class NativeSession final : public Outlet, public reactor::IoHandler {
 public:
  struct Env {
    const config::BrokerConfig& config;
    reactor::Reactor& reactor;
    Router& router;
    Fanout& fanout;
    Counters& counters;
  };
  NativeSession(Env env, std::unique_ptr<session::Transport> transport, std::string peer, uint64_t now_ns);
  ~NativeSession() override;

  void on_io(uint32_t events) override;
  void on_tick(uint64_t now_ns);

  void send_image(const cache::Channel& channel, uint32_t request_id) override;
  void send_stream_image(const cache::Channel& channel, SlowPolicy policy) override;
  void send_delivery(const Delivery& delivery) override;
  void send_status(const cache::Channel& channel, wire::ChannelState state, wire::Code code, std::string_view text,
                   bool introduce) override;
  void send_request(uint32_t stream_id, std::string_view topic) override;
  void send_release(uint32_t stream_id) override;
  void send_channel_info(const wire::ChannelInfo& info) override;
  void complete_request(uint32_t request_id, const Outcome& outcome) override;
  void flush_output() override;
  std::string_view name() const override { return name_; }

  // Queues a frame encoded by another thread (a gateway's REQUEST, RELEASE or
  // CHANNEL_INFO), by reference: it must stay valid until the turn's flush.
  void forward_frame(std::span<const uint8_t> frame);
  // Marks the session for closing with an ERROR frame (code Ok: no frame;
  // logged at debug level unless `warn`).
  void fail(wire::Code code, std::string_view text, bool warn = false);
  bool closing() const { return phase_ == Phase::Closing; }
  // Stops reading; used while the broker drains output at shutdown.
  void stop_reading() { pause_input(true); }
  // Stops or resumes reading the socket (backpressure: TCP holds the peer back).
  // A paused connection is never closed as idle; its idle clock restarts on resume.
  void pause_input(bool paused);
  bool has_output() const { return !out_.empty(); }
  // Best-effort final write of the pending output and the ERROR frame; closes the fd.
  void finish();
  int fd() const { return transport_ ? transport_->fd() : -1; }

  // This connection's slow-consumer history (docs/ARCHITECTURE.md, "Slow consumers").
  struct SlowStats {
    uint64_t conflated_channels = 0;  // channels put in the lag set
    uint64_t refresh_images = 0;      // images sent to resume them
    uint64_t dropped_messages = 0;    // policy drop
    uint64_t drop_notices = 0;        // STATUS MESSAGES_DROPPED sent
    bool disconnected = false;        // closed as SLOW_CONSUMER
  };
  const SlowStats& slow_stats() const { return slow_; }
  // Channels held back now (their refresh or drop notice is still to come).
  size_t lagging_channels() const { return lag_.size(); }
  size_t queued_output() const { return out_.queued_bytes(); }
  // Conflated subscriptions (docs/ARCHITECTURE.md, "Conflation"): channels
  // with updates held for their next merged refresh, and refreshes sent so far.
  size_t conflation_pending() const;
  uint64_t conflation_refreshes() const { return conflation_refreshes_; }

 private:
  // A channel whose stream is held back while the connection is over its bound.
  struct Lag {
    bool refresh = false;    // conflate: send the current image on resume
    bool introduce = false;  // the held image was the stream's first: CHANNEL precedes it
    uint64_t dropped = 0;    // drop: messages discarded, announced on resume
  };

  // A channel of a conflated subscription. Kept after its refresh, so a busy
  // channel costs one node for the connection's life, not one per interval.
  struct Conflated {
    uint64_t due_ns = 0;  // when the merged refresh goes out; 0 = nothing held
    SlowPolicy policy = SlowPolicy::Conflate;
  };

  enum class Phase { AwaitHello, Open, Closing };

  // TLS: drives the handshake until application bytes can flow.
  void advance_handshake();
  void read_input();
  void read_once();
  void parse_input();
  void handle(const wire::Frame& frame);
  void handle_hello(const wire::Frame& frame);
  void handle_subscribe(const wire::Frame& frame, bool subscribe);
  void handle_snapshot(const wire::Frame& frame);
  void handle_register(const wire::Frame& frame);
  void handle_publish(const wire::Frame& frame);
  void handle_provide(const wire::Frame& frame, bool provide);
  void handle_stream_status(const wire::Frame& frame);
  void handle_list_channels(const wire::Frame& frame);
  // A provider message the router ignored: counted, and logged once per connection.
  void note_stray(const Outcome& outcome);
  void send_intro(const cache::Channel& channel);
  void send_ack(uint32_t request_id, const Outcome& outcome);
  // Encodes a small control frame into the arena and queues it.
  template <typename Encode>
  void queue_frame(size_t max_size, Encode&& encode);
  void update_interest();
  bool over_output_limit() const { return out_.queued_bytes() > env_.config.limits.max_output_buffer; }
  // Slow consumers (native_session_slow.cc).
  void queue_image(const cache::Channel& channel, uint32_t request_id);
  // True when the message must not be queued now (lagging channel or congested connection).
  bool hold_back(const cache::Channel& channel, SlowPolicy policy);
  void fail_slow_consumer();
  // Queue drained below the low-water mark: refresh images and drop notices,
  // as copies in the backlog, until the queue is full again or all are sent.
  void resume_lagging();
  void append_refresh(const cache::Channel& channel, bool introduce);
  void append_image_copy(const cache::Channel& channel, bool introduce);
  // Conflated subscriptions (native_session_conflate.cc).
  void hold_for_interval(const Delivery& delivery);
  // A real-time delivery of a channel with held updates (a real-time pattern
  // was added): the refresh goes now, carrying this message too. True when it did.
  bool release_interval_hold(const Delivery& delivery);
  void send_due_refreshes(uint64_t now_ns);
  void send_interval_refresh(cache::ChannelId id, SlowPolicy policy);
  void append_drop_notice(const cache::Channel& channel, uint64_t dropped);
  void account_written();

  Env env_;
  std::unique_ptr<session::Transport> transport_;  // null once finished
  std::string peer_;
  std::string client_name_;
  std::string name_;          // "client@peer", for logs and the admin view
  bool stray_logged_ = false;
  Phase phase_ = Phase::AwaitHello;
  bool reading_ = true;
  bool want_write_ = false;
  bool handshaken_ = false;         // the transport carries application bytes
  uint32_t handshake_events_ = 0;   // what the unfinished handshake waits for
  uint32_t interest_ = 0x001;  // EPOLLIN, as registered by the broker
  std::vector<uint8_t> in_;
  size_t in_len_ = 0;
  io::OutQueue out_;
  std::vector<cache::ChannelId> publish_ids_;  // publish_id -> channel
  uint64_t opened_ns_;
  uint64_t last_rx_ns_;
  uint64_t last_tx_ns_;
  uint64_t bytes_written_seen_ = 0;
  uint32_t heartbeat_ms_ = 0;
  uint64_t idle_timeout_ns_ = 0;
  bool congested_ = false;  // over the bound: conflate/drop deliveries are held back until the low-water mark
  std::unordered_map<cache::ChannelId, Lag> lag_;
  std::vector<uint8_t> resume_scratch_;
  std::unordered_map<cache::ChannelId, Conflated> conflated_;
  uint64_t conflation_refreshes_ = 0;
  SlowStats slow_;
  wire::Code close_code_ = wire::Code::Ok;
  std::string close_text_;
};

}  // namespace tw::broker
