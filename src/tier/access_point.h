// AccessPoint: a reactor thread that owns client connections: it reads,
// decodes, answers and writes them, and fans channels out to its
// subscribers (docs/ARCHITECTURE.md, "Threads").
//
// Single-threaded broker: one access point with an authoritative router
// does everything. Tiered broker: every access point has a mirror router and
// an Uplink to the gateways that own the channels; the first one accepts
// connections and hands them round-robin to all of them.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "broker/counters.h"
#include "queue/mailbox.h"
#include "output/fanout.h"
#include "session/session.h"
#include "broker/mirrored_channels.h"
#include "broker/router.h"
#include "config/config.h"
#include "reactor/reactor.h"
#include "session/handshaker.h"
#include "session/tls_context.h"
#include "tier/interest_fence.h"
#include "tier/link.h"
#include "tier/loop_inbox.h"
#include "tier/loop_snapshot.h"
#include "tier/ha_role.h"
#include "tier/protocols.h"
#include "tier/uplink.h"
#include "tickwire/wire/codec.h"

namespace tw::tier {

// A socket the broker listens on, what its connections speak, and the TLS
// they get (null: plain TCP). The broker owns all three; access points only use them.
struct ListenSocket {
  int fd = -1;
  const Protocol* protocol = nullptr;
  session::TlsContext* tls = nullptr;
  std::string name;  // "native tls://127.0.0.1:9443", for the log
};

// One connection's subscriptions, for the admin API (its user decides who may see them).
struct ConnectionSubscriptions {
  std::string user;  // as ConnectionInfo::user
  std::vector<broker::HeldSubscription> patterns;
};

class AccessPoint final {
 public:
  // `input_budget`: this loop's share of limits.max_partial_input.
  AccessPoint(const config::BrokerConfig& config, const broker::RouterLimits& limits,
              std::atomic<uint32_t>& open_connections, size_t input_budget);
  ~AccessPoint();

  // Tiered mode: the links to every gateway (in gateway order) and their wakers.
  void attach_gateways(cache::ChannelDirectory& directory, std::vector<Link*> links, std::vector<Waker*> wakers);
  // Tiered mode, with more than one access point: the links between every
  // gateway and the other access points, for this one's PublishFence.
  void fence_publishes(std::vector<const Link*> others);
  // This access point accepts on every socket and deals connections out to `all` (itself included).
  void accept_for(const std::vector<ListenSocket>& sockets, std::vector<AccessPoint*> all);
  // Any thread: hands over an accepted connection, ready for application bytes.
  void adopt(std::unique_ptr<session::Transport> transport, std::string peer, const Protocol& protocol);
  // Any thread: the same for a WebSocket upgrade from the HTTP thread, whose
  // listener authenticated `user` ("" = nobody). It counts as an open
  // connection from here on; past max_connections it is closed at once.
  void adopt_upgrade(std::unique_ptr<session::Transport> transport, std::string peer, const Protocol& protocol,
                     std::string user);
  // Any thread, and async-signal-safe (SIGHUP): the accepting access point
  // reloads every listener's certificate on its own thread.
  void request_tls_reload();
  // Before run(): the broker's authentication (null = off). After a reload
  // the loop re-entitles its sessions on its next tick.
  void set_authority(auth::Authority* authority) { authority_ = authority; }
  // Before run(): guaranteed messaging's store thread; its answers come through this loop's mailbox.
  void attach_spool(queue::Spool* spool);
  // Before run(): an HA pair's role (null: not in a pair, always serving).
  // While it is not serving, new connections get its refusal and are closed,
  // and when it stops serving, every open one is closed with it.
  void set_ha_role(const HaRole* role) { ha_role_ = role; }

  // The thread's loop; returns after a graceful shutdown once stop is set.
  // The calling thread becomes the owner of everything the access point holds.
  void run(const std::atomic<bool>& stop);
  Waker& waker() { return waker_; }
  // Any thread: the counters as of the loop's last tick (or its end).
  LoopSnapshot snapshot() const { return published_.read(); }
  // Administration (src/admin, access_point_admin.cc): jobs run on this
  // loop's tick; the rest only from such a job, on the loop thread.
  LoopInbox& inbox() { return inbox_; }
  broker::Router& router() { return router_; }
  void describe_connections(uint32_t loop_index, std::vector<ConnectionInfo>& out);
  // One connection's subscriptions (this loop's router holds them, a mirror's
  // too); nullopt when there is no such connection.
  std::optional<ConnectionSubscriptions> describe_subscriptions(uint32_t token);
  // Closes the connection with `code` and `why` (its goodbye); false when there is no such connection.
  bool disconnect(uint32_t token, wire::Code code, std::string_view why);

 private:
  static constexpr size_t kRecordsPerTurn = 4096;
  static constexpr size_t kAcceptsPerTurn = 64;  // per listening socket  // per gateway, so sockets are served between batches
  // Records spilled towards the gateways (their rings full): stop reading
  // connections above the first, resume below the second.
  static constexpr size_t kPauseInputAbove = 64u << 20;
  static constexpr size_t kResumeInputBelow = 16u << 20;

  // Watches one listening socket for this access point.
  struct Acceptor final : reactor::IoHandler {
    Acceptor(AccessPoint& owner, ListenSocket socket) : owner(owner), socket(std::move(socket)) {}
    void on_io(uint32_t) override { owner.accept_pending(socket); }
    AccessPoint& owner;
    ListenSocket socket;
  };
  struct Handoff {
    std::unique_ptr<session::Transport> transport;
    std::string peer;
    const Protocol* protocol = nullptr;
    std::string user;  // a WebSocket upgrade's authenticated user
  };

  void accept_pending(const ListenSocket& socket);
  void shed_one_connection(int listen_fd);
  void reject(int fd, const Protocol& protocol);
  void open_session(std::unique_ptr<session::Transport> transport, std::string peer, const Protocol& protocol,
                    const std::string& user);
  // A TLS connection goes to the handshake thread first, then to `target`.
  void start_tls(int fd, std::string peer, const ListenSocket& socket, AccessPoint* target);
  void reload_tls();
  bool take_handoffs();
  bool drain_gateways();
  bool has_cross_thread_input();
  void handle(uint32_t gateway, const Record& r);
  void settled(uint32_t gateway, const Record& r);
  void hold_origin(uint32_t gateway, const Record& r);
  void handle_stream(uint32_t gateway, std::span<const uint8_t> bytes);
  void handle_stream_frame(uint32_t gateway, const wire::Frame& frame, std::span<const uint8_t> bytes);
  void answer_snapshot(session::Session& session, const Record& r);
  // A REQUEST, RELEASE or CHANNEL_INFO a gateway encoded for one connection, decoded for its session.
  void forward(session::Session& session, std::span<const uint8_t> frame);
  session::Session* session_of(uint32_t token);
  void end_of_turn();
  void reap_closing();
  void apply_input_pressure();
  void tick(uint64_t now_ns);
  void return_freed_memory(uint64_t now_ns);
  void publish_snapshot();
  void shutdown();
  session::Session::Env env() {
    return {config_, reactor_, router_, fanout_, counters_, loop_, authority_, spool_, mailbox_, fence_.get()};
  }
  void follow_auth_reload();
  void follow_ha_role();
  bool refuse_if_not_serving(int fd, const Protocol& protocol, bool tls);
  // Hands the sessions' usage since the last report to the authority (once per tick, and at close).
  void report_usage(const std::vector<session::Session*>& sessions);

  const config::BrokerConfig& config_;
  // The protocols with a tick of their own (Protocol::tick) whose sessions this loop opened.
  std::vector<const Protocol*> ticked_;
  reactor::Reactor reactor_;
  Waker waker_{reactor_};
  output::Fanout fanout_;
  broker::Router router_;
  broker::MirroredChannels* mirror_ = nullptr;  // tiered: the router's owner, which the gateways' records feed
  broker::Counters counters_;
  session::LoopState loop_;
  std::unique_ptr<Uplink> uplink_;
  std::unique_ptr<InterestFence> fence_;
  const HaRole* ha_role_ = nullptr;
  uint64_t ha_generation_ = 0;
  std::atomic<uint32_t>& open_connections_;  // broker-wide, for max_connections
  std::vector<std::unique_ptr<Acceptor>> acceptors_;  // one per listening socket, on the accepting access point
  std::atomic<bool> tls_reload_requested_{false};
  std::unique_ptr<session::Handshaker> handshaker_;  // on the accepting access point, when a listener has TLS
  int spare_fd_ = -1;  // released to accept-and-close at EMFILE
  std::vector<AccessPoint*> peers_;  // where accepted connections go, round-robin
  size_t next_peer_ = 0;
  std::mutex handoff_mutex_;  // per connection, never per message
  std::vector<Handoff> handoffs_;
  std::atomic<bool> has_handoffs_{false};
  uint32_t next_token_ = 1;
  std::unordered_map<uint32_t, std::unique_ptr<session::Session>> sessions_;  // by token
  std::vector<session::Session*> closing_;  // the reap's working copy of loop_.closing
  // The origin an Op::Origin record gave the next IMAGE or UPDATE frame,
  // per gateway: frames of two gateways interleave here, and the
  // frame can come in a later turn than its Origin record (the gateway
  // commits its Stream batch after it), when the ring space of the record
  // is released: its attributes are copied (a buffer that keeps its capacity).
  struct PendingOrigin {
    broker::MessageOrigin origin;
    std::vector<uint8_t> attributes;
    cache::Channel::SetAside retained;  // kFlagRetainedAside: for the next origin
    bool has_retained = false;
  };
  std::vector<PendingOrigin> pending_origins_;  // by gateway
  void hold_retained(PendingOrigin& pending, const Record& r);
  broker::MessageOrigin take_origin(uint32_t gateway) { return std::exchange(pending_origins_[gateway].origin, {}); }
  bool pacing_ready_ = false;
  static constexpr size_t kTrimAfterReaped = 1024;  // connections closed before freed memory is returned
  size_t reaped_since_trim_ = 0;
  uint64_t last_trim_ns_ = 0;  // a paced reply can produce more: the loop does not sleep
  bool input_paused_ = false;  // the gateways are behind: connections are not read
  PublishedSnapshot published_;
  auth::Authority* authority_ = nullptr;
  uint64_t auth_generation_ = 0;  // of the policy the sessions are entitled under
  LoopInbox inbox_;
  queue::Spool* spool_ = nullptr;
  std::shared_ptr<queue::Mailbox> mailbox_;  // with a spool: the store thread's answers
};

}  // namespace tw::tier
