// Session: one client connection, whatever its protocol or transport. It
// owns the connection's three parts:
//   - a Transport (plain TCP, TLS): bytes in, iovecs out;
//   - the protocol, a subclass (src/native; MQTT and WebSocket next): it
//     parses what arrives (parse) and provides the Encoder for what leaves;
//   - the DeliveryPolicy, protocol-neutral: slow consumers, conflation, gap
//     notices, asking the protocol's encoder for the bytes.
// The session holds the lifecycle every protocol shares: the
// protocol's hello, idle and hello timeouts, pausing input (backpressure),
// the turn-end write, and closing.
//
// The transport comes ready for application bytes: plain TCP at once, TLS
// after the Handshaker (handshaker.h) has run its handshake off the loop.
//
// Lifecycle: AwaitHello -> Open -> Closing. A
// session that must close (bad input, timeout, slow consumer, peer gone)
// only marks itself Closing and lists itself in LoopState::closing; its owner
// reaps it at the end of the loop turn (finish, then destroy), so no callback
// ever sees a destroyed session, and the turn's end visits only those.
//
// Its other concerns are parts of their own: the input left over after
// parsing (partial_input.h, counted in the loop's InputBudget; a frame must
// be whole within frame_deadline_ms of its first byte), its place in the
// loop's ticks (tick_schedule.h), a login checked off the loop
// (login_handoff.h) and what the connection did (connection_usage.h).
// Owned by its loop thread.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "auth/authority.h"
#include "broker/counters.h"
#include "output/fanout.h"
#include "broker/outlet.h"
#include "broker/router.h"
#include "config/config.h"
#include "reactor/reactor.h"
#include "session/delivery_policy.h"
#include "session/channel_quota.h"
#include "session/encoder.h"
#include "session/connection_usage.h"
#include "session/input_budget.h"
#include "session/login_handoff.h"
#include "session/loop_state.h"
#include "output/output.h"
#include "session/partial_input.h"
#include "session/publish_fence.h"
#include "session/transport.h"

namespace tw::queue {
class Mailbox;
class Spool;
}  // namespace tw::queue

namespace tw::session {

class Session : public broker::Outlet, public reactor::IoHandler, private InputBudget::Holder {
 public:
  struct Env {
    const config::BrokerConfig& config;
    reactor::Reactor& reactor;
    broker::Router& router;
    output::Fanout& fanout;
    broker::Counters& counters;
    LoopState& loop;
    auth::Authority* authority = nullptr;  // null: authentication off, every connection may do everything
    // Guaranteed messaging (src/queue): null when the broker has no store.
    queue::Spool* spool = nullptr;
    std::shared_ptr<queue::Mailbox> mailbox;  // this loop's, for the store's answers
    const PublishFence* publish_fence = nullptr;  // tiered brokers only (publish_fence.h)
  };
  Session(Env env, std::unique_ptr<Transport> transport, std::string peer, const Encoder& encoder, uint64_t now_ns);
  ~Session() override;

  void on_io(uint32_t events) override;
  void on_tick(uint64_t now_ns);
  // The loop's tick: on_tick for every session due (LoopState::tick_due_ns).
  static void tick_due(LoopState& loop, uint64_t now_ns);
  // When this session's tick next has work (0: the next tick).
  uint64_t tick_due_ns() const { return tick_.due_ns(); }
  // Once registered with the reactor: handles input the transport already
  // holds, which no readiness event will announce (a client's first frames,
  // read ahead by OpenSSL during the TLS handshake).
  void start();

  // Outlet: a subscription's stream goes through the delivery policy.
  void send_image(const cache::Channel& channel, uint32_t request_id) override;
  void send_stream_image(const cache::Channel& channel, broker::SlowPolicy policy) override;
  void send_delivery(const broker::Delivery& delivery) override;
  void send_status(const cache::Channel& channel, wire::ChannelState state, wire::Code code, std::string_view text,
                   bool introduce) override;
  void flush_output() override;
  std::string_view name() const override { return name_; }
  bool entitled(std::string_view topic, uint32_t delay_ms) const override {
    return !grants_ || grants_->receives(topic, delay_ms);
  }
  // The users file changed (auth::Authority::generation): the session takes
  // its user's new grants and gives up what they no longer permit, or closes
  // when its user is gone. Nothing else on the connection changes.
  void reentitle();
  // The user's entitlements; null when authentication is off (everything allowed).
  const auth::Grants* grants() const { return grants_.get(); }
  // Usage since the last call, for the user's accounting (auth/usage.h); resets it.
  auth::Usage take_usage() { return usage_.take(); }
  void count_subscription() { usage_.subscribed(); }
  // The router's advertise of a topic this connection publishes (it holds the
  // channel while it lives), under its channel quotas (channel_quota.h).
  broker::Outcome advertise(std::string_view topic, wire::PayloadKind kind, cache::ChannelId& id);
  // After queueing a subscription's OK ACK (SUBACK) and subscribing to
  // `patterns`: in thread tiers, while a gateway may not hold them yet
  // (broker::Router::settle), the connection's output, that ACK and all
  // behind it, is held back until the access point calls settled(), so the
  // client hears the ACK only once the broker holds the subscription.
  void settle(std::span<const std::string_view> patterns);
  void settled();

  // Marks the session for closing; the protocol says goodbye with `code`
  // (Ok: no goodbye). Logged at debug level when Ok unless `warn`.
  void fail(wire::Code code, std::string_view text, bool warn = false);
  bool closing() const { return phase_ == Phase::Closing; }
  // Stops reading; used while the broker drains output at shutdown.
  void stop_reading() { pause_input(true); }
  // Stops or resumes reading the socket (backpressure: TCP holds the peer back).
  // A paused connection is never closed as idle; its idle clock restarts on resume.
  void pause_input(bool paused);
  bool has_output() const { return !output_.empty(); }
  // Best-effort final write of the pending output and the goodbye; closes the connection.
  void finish();
  int fd() const { return transport_ ? transport_->fd() : -1; }
  std::string_view transport_kind() const { return transport_ ? transport_->kind() : std::string_view{}; }
  // Its protocol's name in the broker's table (tier/protocols.h), whatever
  // carries it: the admin API's and /metrics' label. The table outlives the session.
  std::string_view protocol_name() const { return protocol_name_; }
  void set_protocol_name(std::string_view name) { protocol_name_ = name; }
  // A paced reply (listed in LoopState::paced) produces its next part while
  // the output has room, and calls end_paced() once it is complete.
  virtual void pace() {}
  // False while the paced reply waits for another thread (the loop may sleep).
  virtual bool can_pace() const { return true; }
  // Below this many queued bytes a paced reply may produce more.
  bool output_has_room() const;
  bool paced() const { return paced_; }
  // At the end of each turn, before the flush: every paced session produces its next part.
  static void pace_all(LoopState& loop);
  // True when a paced session could produce more now (the loop should not sleep).
  static bool pacing_ready(const LoopState& loop);

  const DeliveryPolicy::Stats& slow_stats() const { return policy_.stats(); }
  size_t lagging_channels() const { return policy_.lagging_channels(); }
  size_t queued_output() const { return output_.queued_bytes(); }
  size_t conflation_pending() const { return policy_.conflation_pending(); }
  using Traffic = ConnectionUsage::Traffic;
  Traffic traffic() const { return usage_.traffic(); }
  const std::string& peer() const { return peer_; }
  const std::string& client_name() const { return client_name_; }
  uint64_t opened_ns() const { return opened_ns_; }
  uint64_t conflation_refreshes() const { return policy_.conflation_refreshes(); }

 protected:
  // The access point's settled(): every gateway holds the subscriptions
  // settled, and the images they sent for them have come.
  virtual void on_settled() {}
  bool unsettled() const { return unsettled_ > 0; }
  // The protocol's part. Handles the complete messages at the front of `in`
  // and returns how many bytes it consumed; on bad input it calls fail().
  virtual size_t parse(std::span<const uint8_t> in) = 0;
  // Encodes the protocol's goodbye for a close with `code` (never Ok);
  // returns its size, 0 for none.
  virtual size_t encode_goodbye(std::span<uint8_t> out, wire::Code code, std::string_view text) = 0;
  // The tick of an open session, after the idle check: heartbeats, keepalives.
  virtual void on_open_tick(uint64_t now_ns) = 0;
  // The session is being finished, after its owner removed it from the
  // router: the one moment a protocol may still publish on its behalf (an
  // MQTT Will), since no fan-out is running.
  virtual void on_finish() {}
  // A protocol's own copies (DeliveryPolicy, "Own copies"): it delivers
  // them through the same policy, and says when an acknowledgement freed a
  // slot of its window.
  void set_own_copies(OwnCopies& copies) { policy_.set_own_copies(copies); }
  void send_stream_image_as(const cache::Channel& channel, broker::SlowPolicy policy, Copy copy);
  void send_delivery_as(const broker::Delivery& delivery, Copy copy);
  void window_freed() { policy_.resume(); }
  // Sets the encoder once the hello fixed the protocol's version (before any subscription).
  void set_encoder(const Encoder& encoder) { policy_.set_encoder(encoder); }
  // When on_open_tick next has work, if nothing happens meanwhile (0: every tick).
  virtual uint64_t open_tick_due_ns() const { return 0; }

  // The protocol's hello was accepted: the session is open, named
  // "client@peer", and closed after `idle_timeout_ns` without input.
  void open(std::string_view client_name, uint64_t idle_timeout_ns);
  bool is_open() const { return phase_ == Phase::Open; }
  // A closing session that ended on its own slow-consumer verdict.
  void apply(DeliveryPolicy::Verdict verdict);

  // A reply that is produced as the output drains: input waits (in the
  // socket) until end_paced(), so replies keep the order of the requests.
  void begin_paced();
  void end_paced();
  // Authentication, for any protocol's hello (docs/security.md).
  void set_grants(std::shared_ptr<const auth::Grants> grants) { grants_ = std::move(grants); }
  // Checks a password off the loop thread, queued under the peer's address
  // (auth/authority.h): input pauses until the answer, which on_login()
  // gets on a later tick.
  void begin_login(std::string_view user, std::string_view password);
  bool login_pending() const { return login_.pending(); }
  // The answer to begin_login: grants, or null and why (for the client).
  virtual void on_login(std::shared_ptr<const auth::Grants> grants, std::string_view error) = 0;
  // In on_login: the refusal was "busy" (too many logins from this address,
  // or in all), not a checked password; a protocol may answer it as such.
  bool login_was_busy() const { return login_.was_busy(); }
  // After reentitle(): what the protocol holds beyond subscriptions (native publish ids).
  virtual void on_reentitled() {}
  // A protocol that must wait before it answers its hello (MQTT: a takeover
  // waiting for the old connection's session), with the input paused: polled
  // every tick meanwhile, as a login is. It calls resume_input() when done.
  virtual bool holds_hello() const { return false; }
  virtual void poll_held_hello(uint64_t /*now_ns*/) {}
  // Input paused for a login or a held hello goes on: the frames that came behind the hello first.
  void resume_input();

  const Env& env() const { return env_; }
  output::Output& output() { return output_; }
  // The TLS client certificate's identity (subject CN or a SAN), "" if none.
  std::string peer_identity() const { return transport_ ? transport_->peer_identity() : std::string(); }
  auth::CertificateNames peer_names() const { return transport_ ? transport_->peer_names() : auth::CertificateNames(); }
  uint64_t last_tx_ns() const { return last_tx_ns_; }
  void set_last_tx_ns(uint64_t now_ns) { last_tx_ns_ = now_ns; }

 private:
  enum class Phase { AwaitHello, Open, Closing };
  uint32_t unsettled_ = 0;   // settle() calls that held the output, not yet settled()
  uint32_t settle_ids_ = 0;  // names each settle() towards the gateways

  void read_input();
  void read_once();
  void parse_input();
  // parse(), counting the frames it took (the loop's frames_in grows by them).
  size_t parse_counted(std::span<const uint8_t> in);
  // After a parse: keeps `rest` (what it left of the read buffer or of in_)
  // in in_ and counts in_ in the loop's input budget.
  void keep_unparsed(std::span<const uint8_t> rest, bool frame_completed);
  void release_input();
  bool tick_input(uint64_t now_ns);
  void tick_checks(uint64_t now_ns);
  // Something happened: the next tick visits this session.
  void wake_tick() { tick_.wake(); }
  uint64_t next_tick_due_ns() const;
  void list_paced();
  void give_up_input() override;
  bool reads() const { return reading_ && !paced_; }
  void update_interest();
  void account_written();
  void poll_login();

  Env env_;
  std::unique_ptr<Transport> transport_;  // null once finished
  std::string_view protocol_name_ = "native";
  std::string peer_;
  std::string client_name_;
  std::string name_;  // "client@peer", for logs and the admin view
  Phase phase_ = Phase::AwaitHello;
  bool reading_ = true;
  bool want_write_ = false;
  bool paced_ = false;
  bool paced_listed_ = false;  // in LoopState::paced
  uint32_t interest_ = 0x001;  // EPOLLIN, as registered by the owner
  TickSchedule::Entry tick_;
  PartialInput in_;
  output::Output output_;
  DeliveryPolicy policy_;
  uint64_t opened_ns_;
  uint64_t last_rx_ns_;
  uint64_t last_tx_ns_;
  uint64_t bytes_written_seen_ = 0;
  uint64_t idle_timeout_ns_ = 0;
  wire::Code close_code_ = wire::Code::Ok;
  std::string close_text_;
  std::shared_ptr<const auth::Grants> grants_;
  ChannelQuota channel_quota_;
  LoginHandoff login_;
  ConnectionUsage usage_;
};

// Makes a connection's session, on the loop that adopts it (a protocol's
// entry in the broker's table, tier/protocols.h). `user`: whom the HTTP listener
// authenticated a WebSocket upgrade as, from its Basic credentials ("" = nobody,
// and for a listener's connections): the browser stream's user.
using SessionFactory = std::function<std::unique_ptr<Session>(Session::Env env, std::unique_ptr<Transport> transport,
                                                              std::string peer, const std::string& user,
                                                              uint64_t now_ns)>;

}  // namespace tw::session
