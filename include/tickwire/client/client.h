// tw::client::Client: a Tickwire native-protocol client (libtickwire).
//
// Threading: single-threaded and NOT thread-safe. The thread that calls poll()
// owns the client; every method must be called from it, and every callback
// runs on it, inside poll(), flush() is the only exception (it never calls back).
// Use one Client per thread.
//
// Lifecycle:
//   Client c;  c.on_connection(...); c.on_error(...);
//   c.connect(opts)            blocks until WELCOME (or connect_timeout_ms)
//   c.subscribe("DEMO/EQ/>", handler);  id = c.advertise("DEMO/EQ/X", kind);
//   loop { c.publish(id, bytes); c.poll(10); }
//   c.close()                  drains buffered output (close_linger_ms), then closes
//
// poll(timeout_ms): flushes buffered output, waits up to timeout_ms for input,
// decodes frames and calls handlers, sends heartbeats, detects a silent broker
// (no bytes for 3 heartbeat intervals), reconnects, and flushes again. It
// returns as soon as one read pass delivered at least one message.
//
// Publishing: publish() encodes the PUBLISH frame straight into a reusable
// output buffer (no allocation per message) and returns; the buffer is written
// with one send() at the end of poll() or in flush(). When the buffer cannot
// grow past Options::max_output_buffer, publish() returns an error (back
// pressure): call poll()/flush() and retry. Publishing while disconnected is
// refused, not queued: live data published during an outage would be stale.
//
// Dispatch rule: each channel message (IMAGE/UPDATE/STATUS) is delivered ONCE,
// to the handler of the oldest live subscription whose pattern matches the
// channel's topic, even when several of the client's subscriptions match (the
// broker also sends each channel once per connection). Snapshot images are not
// dispatched: snapshot() returns them.
//
// Interactive providing: provide("SVC", "", on_request, on_release) offers to
// serve topics of service SVC on demand. When a subscriber wants a topic of
// SVC that no one publishes, the broker sends REQUEST and on_request(stream)
// runs (inside poll()); answer with publish_stream(stream.id, image, true),
// then updates with image = false, or refuse with stream_status(stream.id,
// Closed, NotFound, "..."). STALE / OK may be sent with stream_status() too.
// When the last subscriber has gone (after the broker's linger) RELEASE ends
// the stream and on_release(stream) runs; on_release also runs for every open
// stream when the connection is lost. A REQUEST for a service the client no
// longer provides is answered CLOSED/NOT_FOUND by the client itself.
//
// Channel status: STATUS CLOSED ends an exact subscription (pattern == topic)
// at the broker; the client removes its local subscriptions with that pattern
// and delivers the STATUS to each of them (an exception to the once-per-channel
// rule, so every ended subscription learns why). After STATUS STALE, a
// recovery IMAGE replaces the image (it is never a gap), then STATUS OK.
//
// Reconnect: when the connection is lost (EOF, socket error, protocol error,
// heartbeat timeout, ERROR frame) and Options::reconnect is set, poll() retries
// with exponential backoff (reconnect_min_ms doubling to reconnect_max_ms).
// After WELCOME it re-sends every REGISTER (same publish ids), PROVIDE and SUBSCRIBE,
// forgets all channel state (ids, topics, sequence baselines) and reports
// ConnectionEvent::Reconnected; the broker then sends fresh IMAGEs. Buffered
// output and pending requests of the lost connection are dropped. close()
// stops reconnecting. Callbacks are not called by close().
//
// Re-entrancy: handlers may call subscribe, unsubscribe, advertise, publish,
// provide, withdraw, publish_stream, stream_status, flush and close. poll(),
// snapshot() and list_channels() called from a handler return an error.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tickwire/base/result.h"
#include "tickwire/client/channel_table.h"
#include "tickwire/client/io_buffer.h"
#include "tickwire/client/message.h"
#include "tickwire/client/options.h"
#include "tickwire/wire/codec.h"
#include "tickwire/wire/guaranteed.h"

namespace tw::session {
class TlsContext;
class TlsTransport;
}  // namespace tw::session

struct ssl_session_st;  // OpenSSL's SSL_SESSION

namespace tw::client {

// The publish id of an advertised topic: dense, starting at 1, stable across reconnects.
using PublisherId = uint32_t;

struct SnapshotResult {
  bool found = false;          // false: the broker answered NOT_FOUND
  std::string topic;
  uint32_t channel_id = 0;
  uint64_t seq = 0;
  wire::PayloadKind payload_kind = wire::PayloadKind::FieldList;
  std::vector<uint8_t> payload;
};

// One channel of the broker, from list_channels().
struct ChannelRow {
  uint32_t channel_id = 0;
  std::string topic;
  wire::ChannelState state = wire::ChannelState::Ok;
  uint32_t subscribers = 0;
  uint64_t seq = 0;
  uint32_t rate = 0;     // updates in the last full second
  std::string provider;  // "client@host:port" of an interactive channel's provider, "" for broadcast
};

// What the broker said in WELCOME.
// What WELCOME announced. `limits` is announced from protocol version 3 on;
// against a broker that chose version 1 or 2 it stays all 0 (unknown).
struct ServerInfo {
  std::string name;
  uint16_t version = 0;
  uint32_t heartbeat_ms = 0;
  uint32_t max_frame = 0;
  uint32_t max_subscriptions = 0;
  wire::WelcomeLimits limits;
};

class Client {
 public:
  Client();
  ~Client();  // close()
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Connects and waits for WELCOME, at most options.connect_timeout_ms. On
  // failure nothing is retried (Options::reconnect applies to later losses).
  // Subscriptions and advertisements made before connect() are sent after WELCOME.
  Status connect(const Options& options);
  // See the header comment. Returns the number of messages delivered to
  // handlers (0 on timeout), or -1 when the client is closed/idle or re-entered.
  int poll(int timeout_ms);
  // One non-blocking send() of the buffered output. Errors only when the
  // connection failed (it is then torn down; poll() reconnects).
  Status flush();
  // Closes the connection (after draining output for up to close_linger_ms)
  // and stops reconnecting. connect() may be called again afterwards.
  void close();

  // Validates the pattern, sends SUBSCRIBE (unless a live subscription already
  // has this pattern) and returns the subscription id (>= 1). A refusal by the
  // broker arrives later through on_error and removes the subscription.
  // `policy`: what the broker does when this connection falls behind
  // (Default = the broker's slow_consumer_policy; docs/client.md). It is sent
  // with the pattern's first SUBSCRIBE and again after each reconnect.
  // `conflate_ms` > 0: at most one merged refresh (an IMAGE with every
  // field's latest value) per channel per interval instead of every update,
  // for screens; rounded up to the broker's 50 ms tick (docs/client.md).
  // Sent and re-sent like the policy.
  // `delay_ms` > 0: delayed data, every channel as it was that long ago (for
  // users not entitled to real time; docs/protocol.md, "Delay"). A delayed
  // stream has its own channel id; its messages go to the handler chosen by
  // the dispatch rule, so hold a topic live and delayed on two Clients.
  // The broker refuses it with DELAY_CAPACITY (on_error) when its delayed
  // data is over its bound.
  Result<uint32_t> subscribe(std::string_view pattern, MessageHandler handler,
                             wire::SlowPolicy policy = wire::SlowPolicy::Default, uint32_t conflate_ms = 0,
                             uint32_t delay_ms = 0);
  // Removes every subscription with this pattern and sends UNSUBSCRIBE.
  Status unsubscribe(std::string_view pattern);

  // Validates the topic and sends REGISTER once; advertising a topic again
  // returns the same id (an error if the kind differs).
  Result<PublisherId> advertise(std::string_view topic, wire::PayloadKind kind);
  // Buffers one PUBLISH; image = true replaces the channel's cached image.
  Status publish(PublisherId id, std::span<const uint8_t> payload, bool image = false);
  // Convenience: advertises `topic` with `kind` on first use, then publishes.
  Status publish(std::string_view topic, std::span<const uint8_t> payload, bool image = false,
                 wire::PayloadKind kind = wire::PayloadKind::FieldList);

  // Offers to serve topics of `service` (one topic level) on request;
  // `pattern` narrows them ("" = every topic of the service, else a pattern
  // whose first level is the service, e.g. "SVC/EQ/>"). Sends PROVIDE (again
  // after each reconnect) and returns a provision id (>= 1). One provision per
  // service; a refusal by the broker arrives through on_error and removes it.
  Result<uint32_t> provide(std::string_view service, std::string_view pattern, RequestHandler on_request,
                           ReleaseHandler on_release);
  // Stops providing: sends WITHDRAW and forgets the service's open streams
  // (without calling on_release; the broker moves them to other providers).
  Status withdraw(std::string_view service);
  // Buffers one PUBLISH on a requested stream: the IMAGE first (image = true),
  // then updates. No allocation. Refused for a stream that is not open
  // (never requested, released, closed, or from a lost connection) and, like
  // publish(), under back pressure or while disconnected.
  Status publish_stream(uint32_t stream_id, std::span<const uint8_t> payload, bool image = false);
  // Sends STREAM_STATUS for an open stream: Closed (with e.g. Code::NotFound)
  // refuses or ends it (it is then forgotten, without on_release); Stale / Ok
  // mark it as temporarily unreliable / recovered (send an IMAGE before Ok).
  Status stream_status(uint32_t stream_id, wire::ChannelState state, wire::Code code, std::string_view text);
  // STALE or OK of a broadcast topic this client advertised (STREAM_STATUS
  // naming the publish id): what a relay says of data it no longer receives
  // (a broker link). Refused while disconnected or under back pressure.
  Status channel_status(PublisherId id, wire::ChannelState state, wire::Code code, std::string_view text);
  size_t open_stream_count() const { return streams_.size(); }

  // Guaranteed messaging (protocol version 4; docs/guaranteed.md).
  //
  // publish_guaranteed sends GUARANTEED_PUBLISH with the next message id
  // (returned) and keeps a copy until the broker answers; on_publish_ack's
  // handler gets the answer (OK only once the message is durable in every
  // matching queue). At most Options::guaranteed_window are unanswered at
  // once: past it the call refuses (poll and retry). After a reconnect the
  // unanswered ones are sent again, flagged retransmit (the broker may have
  // stored them: their deliveries are then flagged redelivered).
  Result<uint64_t> publish_guaranteed(std::string_view topic, std::span<const uint8_t> payload);
  void on_publish_ack(PublishAckHandler handler) { on_publish_ack_ = std::move(handler); }
  size_t unanswered_publishes() const { return unanswered_.size(); }
  // Binds to a queue: `handler` gets its messages, at most `window` (0 = the
  // broker's maximum) unacknowledged at once; bound again after a reconnect
  // (what was unacknowledged then comes again, flagged redelivered). A
  // refusal (no such queue, no store) arrives through on_error and removes
  // the binding. Returns the bind id.
  Result<uint32_t> bind(std::string_view queue, QueueHandler handler, uint32_t window = 0);
  // The same with a durable topic subscription or a replay (protocol version
  // 5, docs/guaranteed.md): with options.topic, `queue` names a durable
  // subscription of that topic, made by the broker if absent; a replay is
  // asked once (a rebind after a reconnect goes on from where delivery stands).
  Result<uint32_t> bind(std::string_view queue, QueueHandler handler, const BindOptions& options);
  Status unbind(uint32_t bind_id);
  // Ends the binding and deletes its durable subscription (what it held goes with it).
  Status unsubscribe(uint32_t bind_id);
  // Acknowledges one message (cumulative: every message up to seq delivered to this binding).
  Status ack(uint32_t bind_id, uint64_t seq, bool cumulative = false);
  // Gives a message back: the broker delivers it again, to any consumer of the queue.
  Status nack(uint32_t bind_id, uint64_t seq);

  // Lists the broker's channels of `service` ("" = all) and waits up to
  // timeout_ms for the complete answer, dispatching other messages meanwhile.
  Result<std::vector<ChannelRow>> list_channels(std::string_view service, int timeout_ms);

  // Asks for the cached image of one topic and waits up to timeout_ms,
  // dispatching other messages meanwhile. found = false when the broker has no
  // such channel; an Error on timeout, invalid topic or lost connection.
  Result<SnapshotResult> snapshot(std::string_view topic, int timeout_ms);

  void on_connection(ConnectionHandler handler) { on_connection_ = std::move(handler); }
  void on_error(ErrorHandler handler) { on_error_ = std::move(handler); }

  bool connected() const { return state_ == State::Connected; }
  const Counters& counters() const { return counters_; }
  const ServerInfo& server() const { return server_; }
  // After connect() failed: true when it never reached the broker (nothing
  // listening, no route, connect timeout), so trying again later may work;
  // false when it was refused before trying (options) or after reaching it
  // (TLS, HELLO refused).
  bool unreachable() const { return !reached_ && !last_failure_.empty(); }
  size_t pending_output() const { return out_.size(); }
  // The connection's socket (-1 while not connected), for a caller that waits
  // on several clients in one poll(2) and then calls poll(0) on the ready ones.
  int socket_fd() const { return fd_; }
  // Whether this connection's TLS handshake resumed an earlier session.
  bool tls_resumed() const;
  // Bytes received but invisible to a poll on socket_fd() (decrypted TLS
  // records inside OpenSSL): call poll(0) without waiting on the fd.
  size_t buffered_input() const;
  size_t subscription_count() const;

 private:
  // Securing: the TLS handshake, between the TCP connect and HELLO (options.tls only).
  enum class State : uint8_t { Idle, Connecting, Securing, Handshake, Connected, Backoff, Closed };
  enum class RequestType : uint8_t { Subscribe, Unsubscribe, Snapshot, Provide, Withdraw, ListChannels, Bind };
  struct Subscription {
    uint32_t id = 0;
    std::string pattern;
    MessageHandler handler;
    wire::SlowPolicy policy = wire::SlowPolicy::Default;
    uint32_t conflate_ms = 0;  // 0 = real time
    uint32_t delay_ms = 0;     // 0 = live data
    bool live = true;
  };
  struct Registration {
    std::string topic;
    wire::PayloadKind kind = wire::PayloadKind::FieldList;
  };
  struct PendingRequest {
    RequestType type = RequestType::Subscribe;
    std::string subject;
  };
  struct SnapshotWait {
    uint32_t request_id = 0;
    bool done = false;
    wire::Code code = wire::Code::Ok;
    std::string text;
    SnapshotResult result;
  };
  struct ListWait {
    uint32_t request_id = 0;
    bool done = false;
    wire::Code code = wire::Code::Ok;
    std::string text;
    std::vector<ChannelRow> rows;
  };
  struct Provision {
    uint32_t id = 0;
    std::string service;
    std::string pattern;
    RequestHandler on_request;
    ReleaseHandler on_release;
    bool live = true;
  };
  struct OpenStream {
    uint32_t provision_id = 0;
    std::string topic;
  };
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  // Connection state machine (client_connection.cc).
  void begin_attempt(uint64_t now);
  void attempt_failed(std::string_view reason, uint64_t now);
  void connection_lost(std::string_view reason);
  void teardown_socket();
  void on_welcome(const wire::Welcome& welcome);
  void resend_state();
  void service_timers(uint64_t now);
  int run_once(uint64_t deadline_ns);
  uint64_t next_timer_ns(uint64_t now) const;
  void on_writable();
  void send_hello();
  void advance_tls();
  int on_readable();
  ssize_t receive(std::span<uint8_t> room);
  bool write_some();
  ssize_t send_bytes(std::span<const uint8_t> data);
  std::string io_failure() const;
  void drain_output(uint32_t linger_ms);

  // Frame handling (client_dispatch.cc).
  int process_input();
  int handle_frame(const wire::Frame& frame);
  int handle_image(const wire::Image& image);
  int handle_update(const wire::Update& update);
  int handle_status(const wire::StatusMsg& status);
  void handle_ack(const wire::Ack& ack);
  void handle_error(const wire::ErrorMsg& error);
  int end_exact_subscriptions(const std::string& topic, uint32_t delivered_to, Message& msg);

  // Guaranteed messaging (client_guaranteed.cc).
  struct Binding {
    std::string queue;
    BindOptions options;
    QueueHandler handler;
  };
  struct Unanswered {
    std::string topic;
    std::vector<uint8_t> payload;
  };
  void send_guaranteed(uint64_t id, const Unanswered& message, bool retransmit);
  void send_bind(uint32_t bind_id, const Binding& binding);
  Status send_consumer_ack(wire::MsgType type, uint32_t bind_id, uint64_t seq, bool cumulative);
  Status send_unbind(uint32_t bind_id, bool unsubscribe);
  void resend_guaranteed();
  void handle_publish_ack(const wire::PublishAck& ack);
  int handle_deliver(const wire::Deliver& deliver);
  bool handle_bind_ack(const PendingRequest& request, const wire::Ack& ack);

  // Interactive providing and channel listing (client_provider.cc).
  int handle_request(const wire::Request& request);
  int handle_release(const wire::ReleaseMsg& release);
  void handle_channel_info(const wire::ChannelInfo& info);
  bool handle_provider_ack(const PendingRequest& request, const wire::Ack& ack);
  void send_provide(const Provision& provision);
  bool send_stream_status(uint32_t stream_id, wire::ChannelState state, wire::Code code, std::string_view text);
  Provision* live_provision(std::string_view service);
  Provision* provision_by_id(uint32_t id);
  void end_streams_on_loss();
  void call_release(uint32_t stream_id, const OpenStream& stream);
  Subscription* route(ChannelRecord& channel);
  void deliver(Subscription& sub, const ChannelRecord& ch, Message& msg);
  // Marks one ended: it stays in its vector, since its handler may be
  // running, until sweep_subscriptions() erases it.
  void retire(Subscription& s) {
    s.live = false;
    retired_ = true;
  }
  void retire(Provision& p) {
    p.live = false;
    retired_ = true;
  }
  void sweep_subscriptions();  // erases retired subscriptions and provisions, if any

  // Encoding into out_ (client.cc).
  template <typename Encode>
  bool queue_frame(size_t max_size, Encode&& encode);
  void send_subscribe(wire::MsgType type, std::string_view pattern,
                      wire::SlowPolicy policy = wire::SlowPolicy::Default, uint32_t conflate_ms = 0,
                      uint32_t delay_ms = 0);
  void send_register(PublisherId id, const Registration& reg);
  bool has_live_pattern(std::string_view pattern) const;
  void emit_connection(ConnectionEvent event, std::string_view reason);

  Options options_;
  State state_ = State::Idle;
  int fd_ = -1;
  std::unique_ptr<session::TlsContext> tls_context_;  // loaded by connect() when options.tls
  std::unique_ptr<session::TlsTransport> tls_;        // this connection's TLS; it owns fd_
  // The last TLS session with this broker, offered on the next connection so
  // that a reconnect skips the full key exchange (docs/security.md).
  struct SessionFree {
    void operator()(ssl_session_st* session) const;
  };
  std::unique_ptr<ssl_session_st, SessionFree> tls_resume_;
  std::string tls_resume_for_;  // the broker and TLS files the context and session belong to
  short tls_wants_ = 0;                               // POLLIN or POLLOUT while Securing
  bool ever_connected_ = false;
  // host:port, then Options::failover; the one in use, and how many attempts
  // in a row failed (a whole round of them: back off).
  std::vector<std::pair<std::string, uint16_t>> servers_;
  size_t current_server_ = 0;
  size_t failed_in_round_ = 0;
  bool not_primary_in_round_ = false;  // a broker of the round said NOT_PRIMARY: a failover in progress
  void next_server();
  uint64_t epoch_ = 0;  // bumped at every teardown: frame loops stop when it changes
  uint64_t attempt_deadline_ns_ = 0;
  uint64_t next_attempt_ns_ = 0;
  uint32_t backoff_ms_ = 0;
  uint64_t last_send_ns_ = 0;
  uint64_t last_recv_ns_ = 0;
  uint32_t heartbeat_ms_ = 0;
  std::string last_failure_;
  bool reached_ = false;  // the current connect()'s TCP connection was established
  ServerInfo server_;

  ByteBuffer in_;
  ByteBuffer out_;
  int dispatch_depth_ = 0;
  bool in_poll_ = false;

  std::vector<std::unique_ptr<Subscription>> subscriptions_;  // oldest first
  uint64_t subscription_generation_ = 1;
  bool retired_ = false;  // a subscription or provision awaits sweep_subscriptions()
  uint32_t next_subscription_id_ = 1;
  uint32_t next_request_id_ = 1;
  std::unordered_map<uint32_t, PendingRequest> pending_;
  SnapshotWait* snapshot_wait_ = nullptr;
  ListWait* list_wait_ = nullptr;

  std::vector<std::unique_ptr<Provision>> provisions_;
  uint32_t next_provision_id_ = 1;
  std::unordered_map<uint32_t, OpenStream> streams_;  // open streams by stream id

  std::vector<Registration> registrations_;  // index = publish id - 1
  std::unordered_map<std::string, PublisherId, StringHash, std::equal_to<>> publisher_by_topic_;

  uint64_t next_message_id_ = 1;
  std::map<uint64_t, Unanswered> unanswered_;  // by message id, oldest first
  std::map<uint32_t, Binding> bindings_;       // by bind id
  PublishAckHandler on_publish_ack_;

  ChannelTable channels_;
  Counters counters_;
  ConnectionHandler on_connection_;
  ErrorHandler on_error_;
};

// Encodes one frame straight into the output buffer: no allocation unless the
// buffer must grow, which stops at Options::max_output_buffer.
template <typename Encode>
bool Client::queue_frame(size_t max_size, Encode&& encode) {
  if (!out_.reserve(max_size, options_.max_output_buffer)) {
    // Full: push what we can to the socket before refusing.
    if (fd_ >= 0 && !write_some()) return false;
    if (!out_.reserve(max_size, options_.max_output_buffer)) return false;
  }
  size_t n = encode(out_.writable());
  if (n == 0) return false;
  out_.commit(n);
  return true;
}

}  // namespace tw::client
