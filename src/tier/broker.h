// The broker: the listening sockets, the reactor threads that serve them,
// and the HTTP listener's thread (src/http) when an HTTP listener is configured.
//
// Single-threaded (the default, `gateways = 0`): one access point does
// everything on the thread that calls run(). Tiered (`gateways = G`,
// `access_points = A`): G gateway threads own the channels, A access-point
// threads own the connections, linked pairwise by SPSC rings
// (docs/ARCHITECTURE.md, "Threads").
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tickwire/base/result.h"
#include "config/config.h"
#include "http/route.h"
#include "session/session.h"
#include "websocket/transport.h"
#include "tier/broker_link.h"
#include "tier/ha_role.h"
#include "tier/loop_snapshot.h"
#include "tier/protocols.h"

namespace tw::auth {
class Authority;
}

namespace tw::queue {
class Spool;
}

namespace tw::http {
struct ListenSocket;
struct ServerStats;
}

namespace tw::tier {

class AccessPoint;
class Gateway;

class Broker {
 public:
  explicit Broker(config::BrokerConfig config);
  ~Broker();
  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;

  // Before listen(): what the HTTP listeners answer (src/http; /healthz,
  // the admin API, metrics). A broker with no HTTP listener ignores them.
  void serve(http::Routes routes);
  // Before listen(): one more protocol for the table (tier/protocols.h; the
  // broker starts with builtin_protocols()). Its [[listener]]s and its
  // WebSocket path then serve it; refused when its name or an encoder slot is taken.
  Status add_protocol(Protocol protocol);
  const Protocols& protocols() const;

  // Binds every listener (config::effective_listeners) and loads their TLS
  // certificates; a one-line error when an address is in use or invalid, or
  // a certificate cannot be loaded.
  Status listen();
  uint16_t port() const;  // the first listener's bound port, useful with port 0
  uint16_t http_port() const;  // the first HTTP listener's bound port, 0 if none
  // Any thread, after listen(): the HTTP listener's counts; null without an HTTP listener.
  const http::ServerStats* http_stats() const;
  // Each listener with its bound port: "native tls://127.0.0.1:9443".
  std::vector<std::string> listening() const;
  // Safe from a signal handler (SIGHUP): every TLS listener re-reads its
  // certificate and key for new connections; open ones are not touched.
  void reload_tls();
  // Safe from a signal handler (SIGHUP): the users file is read again
  // (auth_file); open connections keep only what the new rules allow.
  void reload_auth();
  // Runs every thread until stop(); returns after a graceful shutdown.
  void run();
  // Safe from any thread and from a signal handler: wakes the loops to shut down.
  void stop();
  // Any thread: every loop's latest snapshot (taken each tick), added up. A
  // message counts once: its publish where the channel is owned (a gateway,
  // or the single loop), its deliveries where the connections are.
  LoopSnapshot totals() const;

  // Administration (src/admin): the loop threads, for their snapshots and
  // their inboxes (tier/loop_inbox.h), gateways first, then access points.
  struct Loop {
    std::string name;  // the thread's name: "tw-loop", "tw-gw-0", "tw-ap-1"
    std::string role;  // "single", "gateway", "access_point"
    AccessPoint* access_point = nullptr;  // the single loop is an access point
    Gateway* gateway = nullptr;
  };
  std::vector<Loop> loops() const;
  // The index in loops() of the loop that owns `topic`'s channel: its gateway, or the single loop.
  size_t owner_of(std::string_view topic) const;
  const config::BrokerConfig& config() const;
  // Any thread: each [[link]]'s state (tier/broker_link.h), in configuration order.
  std::vector<LinkState> links() const;
  // Any thread: the HA pair's state (tier/ha_role.h).
  HaStatus ha_status() const;
  auth::Authority* authority() const;  // null: authentication off
  // Any thread: guaranteed messaging's queues (src/queue); null without store.dir.
  const queue::Spool* spool() const;
  queue::Spool* spool();  // the admin API's queue actions

 private:
  Status start_fields();
  Status start_auth();
  Status start_store();
  void start_ha();
  Status check_protocols(const std::vector<config::Listener>& listeners) const;
  void start_http(const std::vector<http::ListenSocket>& sockets);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tw::tier
