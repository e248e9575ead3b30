#include "tier/broker.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "base/affinity.h"
#include "base/log.h"
#include "tickwire/fields/dictionary.h"
#include "io/socket.h"
#include "auth/authority.h"
#include "ha/election.h"
#include "queue/spool.h"
#include "http/server.h"
#include "tier/access_point.h"
#include "broker/provider_loads.h"
#include "tier/gateway.h"

namespace tw::tier {

namespace {

broker::RouterLimits router_limits_for(const config::BrokerConfig& c) {
  broker::RouterLimits l;
  l.topic = {c.limits.max_topic_length, c.limits.max_topic_depth};
  l.max_subscriptions = c.limits.max_subscriptions;
  l.max_channels = c.limits.max_channels;
  l.request_timeout_ms = c.request_timeout_ms;
  l.release_linger_ms = c.release_linger_ms;
  l.not_found_ttl_ms = c.not_found_ttl_ms;
  l.channel_linger_ms = c.channel_linger_ms;
  l.delay_max_bytes = c.delay_max_bytes;
  l.delay_bucket_ms = c.delay_bucket_ms;
  l.delay_history = c.delay_history;
  l.balance = c.provider_balance == "round-robin" ? broker::Balance::RoundRobin : broker::Balance::LeastLoaded;
  l.default_policy = c.slow_consumer_policy == "drop"         ? broker::SlowPolicy::Drop
                     : c.slow_consumer_policy == "disconnect" ? broker::SlowPolicy::Disconnect
                                                              : broker::SlowPolicy::Conflate;
  return l;
}

// A ring must hold a few of the largest frames: a record never spans the end.
size_t ring_bytes_for(const config::BrokerConfig& c) {
  return std::max<size_t>(8u << 20, 4 * (size_t{c.limits.max_frame} + 4096));
}

}  // namespace

struct Broker::Impl {
  explicit Impl(config::BrokerConfig c) : config(std::move(c)), limits(router_limits_for(config)) {
    if (single_threaded(config)) {
      access_points.push_back(
          std::make_unique<AccessPoint>(config, limits, open_connections, config.limits.max_partial_input));
      hook_broker_links();
      return;
    }
    directory = std::make_unique<cache::ChannelDirectory>(config.gateways, config.limits.max_channels);
    for (uint32_t g = 0; g < config.gateways; ++g) {
      gateways.push_back(std::make_unique<Gateway>(config, limits, *directory));
      gateways.back()->share_provider_loads(provider_loads);
    }
    // Each access point holds its connections' partial frames: an equal share of the budget each.
    const size_t input_share = config.limits.max_partial_input / config.access_points;
    for (uint32_t a = 0; a < config.access_points; ++a) {
      access_points.push_back(std::make_unique<AccessPoint>(config, limits, open_connections, input_share));
    }
    wire_links();
    hook_broker_links();
  }

  // Every owning loop (the single one, or each gateway) tells every [[link]]
  // of each subscription change; a broker without links installs nothing.
  void hook_broker_links() {
    for (const config::LinkConfig& link : config.links) broker_links.push_back(std::make_unique<BrokerLink>(link));
    if (broker_links.empty()) return;
    auto tell = [this](std::string_view pattern, bool add) {
      for (auto& link : broker_links) link->interest(pattern, add);
    };
    if (gateways.empty()) return access_points[0]->router().on_interest(tell);
    for (auto& gw : gateways) gw->router().on_interest(tell);
  }

  // A link publishes into this broker through its first plaintext native listener.
  void start_broker_links() {
    if (broker_links.empty()) return;
    for (const Bound& b : bound) {
      if (b.listener.protocol != "native" || b.listener.tls()) continue;
      std::string host;
      uint16_t port = 0;
      config::split_host_port(b.listener.address, host, port);
      if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
      if (host == "::") host = "::1";
      for (auto& link : broker_links) link->start(host, b.port);
      return;
    }
    TW_ERROR("[[link]] needs a plaintext native listener to publish into this broker; links not started");
  }

  // links[g][a] joins gateway g and access point a.
  void wire_links() {
    const size_t G = gateways.size(), A = access_points.size();
    std::vector<std::vector<Link*>> by_gateway(G), by_access_point(A);
    for (size_t g = 0; g < G; ++g) {
      for (size_t a = 0; a < A; ++a) {
        links.push_back(std::make_unique<Link>(ring_bytes_for(config)));
        by_gateway[g].push_back(links.back().get());
        by_access_point[a].push_back(links.back().get());
      }
    }
    std::vector<Waker*> gateway_wakers, access_point_wakers;
    for (auto& gw : gateways) gateway_wakers.push_back(&gw->waker());
    for (auto& ap : access_points) access_point_wakers.push_back(&ap->waker());
    for (size_t g = 0; g < G; ++g) gateways[g]->connect(by_gateway[g], access_point_wakers);
    for (size_t a = 0; a < A; ++a) access_points[a]->attach_gateways(*directory, by_access_point[a], gateway_wakers);
    if (A < 2) return;
    for (size_t a = 0; a < A; ++a) {
      std::vector<const Link*> others;
      for (size_t b = 0; b < A; ++b) {
        if (b != a) others.insert(others.end(), by_access_point[b].begin(), by_access_point[b].end());
      }
      access_points[a]->fence_publishes(std::move(others));
    }
  }

  // Names the calling thread, asks for its scheduler slice, and pins it to
  // the n-th cpu of `cpus`, if any.
  void place(size_t n, const std::string& name) {
    name_current_thread(name);
    ask_for_slice(name, /*report=*/n == 0);
    if (n >= cpus.size()) return;
    if (auto pinned = pin_current_thread(cpus[n]); !pinned) {
      TW_WARN("%s: %s (running unpinned)", name.c_str(), pinned.error().message.c_str());
    }
  }

  // Failures are reported per thread; what the kernel granted, once.
  void ask_for_slice(const std::string& name, bool report) {
    if (config.loop_slice_us == 0) return;
    auto slice = set_current_thread_slice(config.loop_slice_us);
    if (!slice) {
      TW_WARN("%s: cannot set a %u µs scheduler slice: %s", name.c_str(), config.loop_slice_us,
              slice.error().message.c_str());
    } else if (report && *slice == 0) {
      TW_INFO("this kernel has no custom scheduler slices (Linux 6.12+): loop threads keep the default");
    } else if (report) {
      TW_INFO("loop threads run in %u µs scheduler slices", *slice);
    }
  }

  void log_placement() {
    if (config.cpus.empty()) return;
    auto parsed = parse_cpu_list(config.cpus);
    if (!parsed) return;
    cpus = *parsed;
    // Threads on two sockets pass every message across the interconnect.
    if (numa_nodes_of(cpus).size() > 1) {
      TW_WARN("pinning loop threads: %s", describe_placement(cpus).c_str());
    } else {
      TW_INFO("pinning loop threads: %s", describe_placement(cpus).c_str());
    }
  }

  LoopSnapshot totals() const {
    LoopSnapshot total;
    for (const auto& ap : access_points) {
      LoopSnapshot part = ap->snapshot();
      if (!gateways.empty()) part.router.publishes = 0;  // a mirror forwards them to a gateway
      add_to(total, part);
    }
    for (const auto& gw : gateways) {
      LoopSnapshot part = gw->snapshot();
      part.router.deliveries = 0;  // to access points, which count their own
      add_to(total, part);
    }
    return total;
  }

  void log_totals() const {
    const LoopSnapshot sum = totals();
    const broker::Counters& c = sum.counters;
    if (c.conflated_channels != 0 || c.dropped_messages != 0 || c.slow_consumers != 0) {
      // A conflation episode is one channel held back once while its subscriber lagged.
      TW_INFO("slow consumers: %lu conflation episodes, %lu refresh images, %lu messages dropped, %lu disconnected",
              static_cast<unsigned long>(c.conflated_channels), static_cast<unsigned long>(c.refresh_images),
              static_cast<unsigned long>(c.dropped_messages), static_cast<unsigned long>(c.slow_consumers));
    }
    const broker::RouterStats& r = sum.router;
    if (r.channels_freed != 0 || r.channels_evicted != 0 || r.delay_compactions != 0 || c.channel_quota_hits != 0 ||
        c.user_channel_quota_hits != 0) {
      TW_INFO("bounds: %lu unused channels freed, %lu last values evicted, %lu delayed entries compacted, %lu channel "
              "quota refusals (%lu of them a user's)",
              static_cast<unsigned long>(r.channels_freed), static_cast<unsigned long>(r.channels_evicted),
              static_cast<unsigned long>(r.delay_compactions),
              static_cast<unsigned long>(c.channel_quota_hits + c.user_channel_quota_hits),
              static_cast<unsigned long>(c.user_channel_quota_hits));
    }
    if (c.partial_input_closes != 0 || c.frame_deadline_closes != 0 || c.fd_exhausted != 0) {
      TW_INFO("input bounds: %lu connections closed past max_partial_input, %lu past frame_deadline_ms; %lu "
              "refused for lack of file descriptors",
              static_cast<unsigned long>(c.partial_input_closes), static_cast<unsigned long>(c.frame_deadline_closes),
              static_cast<unsigned long>(c.fd_exhausted));
    }
    if (spool) {
      const queue::Spool::Stats g = spool->stats();
      TW_INFO("guaranteed: %lu publishes stored, %lu refused (%lu queue full, %lu disk), %lu unrouted; %lu syncs, max "
              "%lu us",
              static_cast<unsigned long>(g.publishes), static_cast<unsigned long>(g.refused),
              static_cast<unsigned long>(g.refused_full), static_cast<unsigned long>(g.refused_disk),
              static_cast<unsigned long>(g.unrouted), static_cast<unsigned long>(g.syncs),
              static_cast<unsigned long>(g.max_sync_ns / 1000));
    }
    TW_INFO("stopped: %lu connections served, %lu publishes, %lu deliveries, max loop turn %lu us",
            static_cast<unsigned long>(c.connections_accepted), static_cast<unsigned long>(sum.router.publishes),
            static_cast<unsigned long>(sum.router.deliveries),
            static_cast<unsigned long>(sum.loop.max_turn_ns / 1000));
  }

  config::BrokerConfig config;
  broker::RouterLimits limits;
  // Before the access points: their sessions point into it, so it goes after them.
  Protocols protocols = builtin_protocols();
  std::atomic<uint32_t> open_connections{0};
  std::unique_ptr<cache::ChannelDirectory> directory;
  // Before the access points: their sessions detach from it as they close.
  std::unique_ptr<queue::Spool> spool;  // guaranteed messaging, when store.dir is set
  broker::ProviderLoads provider_loads;  // shared by the gateways, so they balance providers as one
  std::vector<std::unique_ptr<Gateway>> gateways;
  std::vector<std::unique_ptr<AccessPoint>> access_points;
  std::vector<std::unique_ptr<Link>> links;
  std::vector<int> cpus;
  // A bound listener: its socket, and the TLS context its connections use.
  struct Bound {
    config::Listener listener;
    int fd = -1;
    uint16_t port = 0;
    std::unique_ptr<session::TlsContext> tls;
  };
  std::vector<Bound> bound;
  std::atomic<bool> stop_access_points{false};
  std::atomic<bool> stop_gateways{false};
  std::unique_ptr<auth::Authority> authority;  // when auth_file is set
  http::Routes routes;                         // what the HTTP listeners answer (serve())
  std::atomic<size_t> next_upgrade{0};         // round-robin over the access points
  std::unique_ptr<http::Server> http;          // when an HTTP listener is bound
  std::vector<std::unique_ptr<BrokerLink>> broker_links;  // [[link]]s, started by run()
  HaRole ha_role;                              // serving always, unless [ha] is on
  // Last: destroyed first, so its thread (which calls follow_election) ends before the rest.
  std::unique_ptr<ha::Election> election;      // when [ha] is on
  std::string ha_name;                         // its name in etcd: the address clients use

  // The election's verdicts, on its thread. A primary that loses etcd (no
  // leader known) keeps serving direct messaging: nobody else can have been
  // elected while etcd cannot be reached by it either, and its fence stops
  // guaranteed acknowledgements anyway (may_act_as_primary).
  void follow_election(const ha::Role& role) {
    if (role.primary) {
      ha_role.set(true, "");
    } else if (!role.leader.empty()) {
      ha_role.set(false, "this broker is the HA backup; the primary is " + role.leader);
    }
    for (auto& ap : access_points) ap->waker().notify_always();
  }
};

Broker::Broker(config::BrokerConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}
Broker::~Broker() {
  impl_->http.reset();  // its thread stops before the sockets close
  for (const Impl::Bound& b : impl_->bound) io::close_fd(b.fd);
}

namespace {

// The certificate is loaded before the socket is bound: a listener whose
// files are wrong stops the broker at start, never at the first client.
Status bind_listener(const config::Listener& listener, int& fd, uint16_t& port,
                     std::unique_ptr<session::TlsContext>& tls) {
  std::string host;
  uint16_t wanted = 0;
  if (!config::split_host_port(listener.address, host, wanted)) {
    return Error{"invalid listen address '" + listener.address + "' (expected HOST:PORT)"};
  }
  if (listener.tls()) {
    auto context = session::TlsContext::server({listener.cert, listener.key, listener.client_ca});
    if (!context) return Error{"listener " + listener.describe(wanted) + ": " + context.error().message};
    tls = std::move(*context);
  }
  auto bound = io::listen_tcp(host, wanted);
  if (!bound) return Error{bound.error().message};
  fd = *bound;
  port = io::local_port(fd);
  return Ok{};
}

}  // namespace

namespace {

bool is_loopback(const std::string& address) {
  std::string host;
  uint16_t port = 0;
  if (!config::split_host_port(address, host, port)) return false;
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace

// fields_file extends the built-in dictionary, once, before the loops start.
Status Broker::start_fields() {
  const std::string& path = impl_->config.fields_file;
  if (path.empty()) return Ok{};
  auto dict = fields::Dictionary::load(path, &fields::Dictionary::builtin());
  if (!dict) return Error{"fields_file: " + dict.error().message};
  TW_INFO("field dictionary: %zu fields (%zu from %s)", dict->all().size(),
          dict->all().size() - fields::Dictionary::builtin().all().size(), path.c_str());
  fields::set_broker_dictionary(std::move(*dict));
  return Ok{};
}

// Safe defaults (docs/security.md): without a users file only loopback
// listeners start, unless allow_anonymous says open access is meant.
Status Broker::start_auth() {
  const config::BrokerConfig& c = impl_->config;
  if (c.auth_file.empty()) {
    if (c.allow_anonymous) return Ok{};
    for (const config::Listener& l : config::effective_listeners(c)) {
      if (!is_loopback(l.address)) {
        return Error{"listener " + l.address + " is not on loopback: set auth_file (docs/security.md), or " +
                     "allow_anonymous = true to let anyone who reaches it publish and subscribe"};
      }
    }
    return Ok{};
  }
  auto policy = auth::Policy::load(c.auth_file);
  if (!policy) return Error{"auth_file: " + policy.error().message};
  auth::Authority::Settings settings{.path = c.auth_file,
                                     .allow_anonymous = c.allow_anonymous,
                                     .failure_delay_ms = c.auth_failure_delay_ms,
                                     .usage_log = c.usage_log,
                                     .usage_interval_ms = c.usage_interval_ms,
                                     .verifier_threads = c.auth_verifier_threads,
                                     .max_pending_per_source = c.auth_max_pending_per_source};
  impl_->authority = std::make_unique<auth::Authority>(std::move(settings), std::move(*policy));
  impl_->authority->start();
  for (auto& ap : impl_->access_points) ap->set_authority(impl_->authority.get());
  TW_INFO("authentication on: %zu users, %zu rule patterns from %s", impl_->authority->policy()->user_count(),
          impl_->authority->policy()->rule_count(), c.auth_file.c_str());
  return Ok{};
}

void Broker::reload_auth() {
  if (impl_->authority) impl_->authority->request_reload();
}

void Broker::serve(http::Routes routes) { impl_->routes = std::move(routes); }

Status Broker::add_protocol(Protocol protocol) { return impl_->protocols.add(std::move(protocol)); }

const Protocols& Broker::protocols() const { return impl_->protocols; }

namespace {

http::ServerSettings http_settings_for(const config::BrokerConfig& c) {
  http::ServerSettings s;
  s.limits.max_header_bytes = c.limits.max_http_header_bytes;
  s.limits.max_body_bytes = c.limits.max_http_body;
  s.request_timeout_ms = c.http_request_timeout_ms;
  s.idle_timeout_ms = c.http_idle_timeout_ms;
  s.handshake_timeout_ms = c.handshake_timeout_ms;
  s.max_connections = c.limits.max_http_connections;
  s.max_websocket_message = c.limits.max_websocket_message;
  s.allowed_origins = c.http_allowed_origins;
  return s;
}

}  // namespace

// The HTTP listeners go to the HTTP thread, never to a loop.
void Broker::start_http(const std::vector<http::ListenSocket>& sockets) {
  if (sockets.empty()) return;
  Impl& s = *impl_;
  s.http = std::make_unique<http::Server>(http_settings_for(s.config), s.routes, s.authority.get());
  for (const http::ListenSocket& socket : sockets) s.http->add_listener(socket);
  // Protocols served over WebSocket too (MQTT on /mqtt, the browser stream on /stream): the same sessions over a
  // websocket::Transport.
  for (const auto& entry : s.protocols.all()) {
    if (!entry->websocket) continue;
    const Protocol& protocol = *entry;
    http::WebSocketRoute route;
    route.subprotocol = protocol.websocket->subprotocol;
    route.framing = protocol.websocket->framing;
    route.adopt = [&s, &protocol](std::unique_ptr<session::Transport> transport, const http::Request& request) {
      AccessPoint& target = *s.access_points[s.next_upgrade.fetch_add(1) % s.access_points.size()];
      target.adopt_upgrade(std::move(transport), request.peer, protocol, request.user);
    };
    s.http->add_websocket(protocol.websocket->path, std::move(route));
  }
}

// Every listener speaks a protocol of the table (or is the HTTP listener).
Status Broker::check_protocols(const std::vector<config::Listener>& listeners) const {
  for (const config::Listener& listener : listeners) {
    const Protocol* p = impl_->protocols.find(listener.protocol);
    if (listener.protocol == "http" || (p != nullptr && p->listens)) continue;
    std::string known = "http";
    for (std::string_view name : impl_->protocols.names()) {
      if (impl_->protocols.find(name)->listens) known += ", " + std::string(name);
    }
    return Error{"listener " + listener.address + ": protocol '" + listener.protocol + "' is not one of " + known};
  }
  return Ok{};
}

Status Broker::listen() {
  if (auto status = start_fields(); !status) return status;
  if (auto status = start_auth(); !status) return status;
  if (auto status = start_store(); !status) return status;
  std::vector<ListenSocket> sockets;
  std::vector<http::ListenSocket> http_sockets;
  const std::vector<config::Listener> listeners = config::effective_listeners(impl_->config);
  if (auto status = check_protocols(listeners); !status) return status;
  for (const config::Listener& listener : listeners) {
    Impl::Bound b;
    b.listener = listener;
    if (auto status = bind_listener(listener, b.fd, b.port, b.tls); !status) {
      // An embedded default (the MQTT port, which a local mosquitto may hold)
      // is not worth stopping for; a listener the user asked for is.
      if (!listener.optional) return status;
      TW_WARN("default %s listener on %s not started: %s (the broker runs without it; %s_listen = \"\" skips it)",
              listener.protocol.c_str(), listener.address.c_str(), status.error().message.c_str(),
              listener.protocol.c_str());
      continue;
    }
    if (listener.protocol == "http") {
      http_sockets.push_back({b.fd, b.tls.get(), listener.describe(b.port)});
    } else {
      sockets.push_back({b.fd, impl_->protocols.find(listener.protocol), b.tls.get(), listener.describe(b.port)});
    }
    impl_->bound.push_back(std::move(b));
  }
  std::vector<AccessPoint*> all;
  for (auto& ap : impl_->access_points) all.push_back(ap.get());
  impl_->access_points[0]->accept_for(sockets, all);
  start_http(http_sockets);
  start_ha();
  return Ok{};
}

// Guaranteed messaging: the queues are recovered before any client can connect.
// [ha]: the broker serves no client until etcd elects it (or names the
// primary, whom a refused client is told of). Its name in etcd is the
// address clients use for it.
void Broker::start_ha() {
  Impl& s = *impl_;
  const config::HaConfig& c = s.config.ha;
  if (c.etcd.empty()) return;
  std::string advertise = c.advertise;
  for (const Impl::Bound& b : s.bound) {
    if (!advertise.empty()) break;
    std::string host;
    uint16_t port = 0;
    if (b.listener.protocol == "native" && config::split_host_port(b.listener.address, host, port)) {
      advertise = host + ":" + std::to_string(b.port);
    }
  }
  s.ha_name = advertise;
  s.ha_role.set(false, "no primary is elected yet");
  for (auto& ap : s.access_points) ap->set_ha_role(&s.ha_role);
  s.election = std::make_unique<ha::Election>(
      ha::EtcdOptions{c.etcd}, ha::ElectionOptions{.key = c.key, .name = advertise, .ttl_s = c.ttl_s},
      [&s](const ha::Role& role) { s.follow_election(role); });
  // Guaranteed publishes are acknowledged only inside the term's time fence.
  if (s.spool) s.spool->set_fence([election = s.election.get()] { return election->may_act_as_primary(); });
  s.election->start();
  TW_INFO("ha: %s campaigns for '%s' on %s (lease %u s)", advertise.c_str(), c.key.c_str(), c.etcd.front().c_str(),
          c.ttl_s);
}

Status Broker::start_store() {
  const config::BrokerConfig& c = impl_->config;
  if (c.store.dir.empty()) return Ok{};
  auto spool = queue::Spool::open(c);
  if (!spool) return Error{"store: " + spool.error().message};
  impl_->spool = std::move(*spool);
  for (auto& ap : impl_->access_points) ap->attach_spool(impl_->spool.get());
  TW_INFO("guaranteed messaging on: %zu queue%s in %s", c.queues.size(), c.queues.size() == 1 ? "" : "s",
          c.store.dir.c_str());
  return Ok{};
}

const queue::Spool* Broker::spool() const { return impl_->spool.get(); }
queue::Spool* Broker::spool() { return impl_->spool.get(); }

uint16_t Broker::port() const { return impl_->bound.empty() ? 0 : impl_->bound.front().port; }

const http::ServerStats* Broker::http_stats() const { return impl_->http ? &impl_->http->stats() : nullptr; }

uint16_t Broker::http_port() const {
  for (const Impl::Bound& b : impl_->bound) {
    if (b.listener.protocol == "http") return b.port;
  }
  return 0;
}

std::vector<std::string> Broker::listening() const {
  std::vector<std::string> names;
  for (const Impl::Bound& b : impl_->bound) names.push_back(b.listener.describe(b.port));
  return names;
}

void Broker::reload_tls() {
  impl_->access_points[0]->request_tls_reload();
  if (impl_->http) impl_->http->request_tls_reload();
}

void Broker::run() {
  Impl& s = *impl_;
  s.log_placement();
  if (s.http) s.http->start();
  s.start_broker_links();
  if (s.gateways.empty()) {
    s.place(0, "tw-loop");
    s.access_points[0]->run(s.stop_access_points);
  } else {
    TW_INFO("threads: %zu gateway%s, %zu access point%s", s.gateways.size(), s.gateways.size() == 1 ? "" : "s",
            s.access_points.size(), s.access_points.size() == 1 ? "" : "s");
    std::vector<std::thread> gateway_threads, access_point_threads;
    for (size_t g = 0; g < s.gateways.size(); ++g) {
      gateway_threads.emplace_back([&s, g] {
        s.place(g, "tw-gw-" + std::to_string(g));
        s.gateways[g]->run(s.stop_gateways);
      });
    }
    for (size_t a = 0; a < s.access_points.size(); ++a) {
      access_point_threads.emplace_back([&s, a] {
        s.place(s.gateways.size() + a, "tw-ap-" + std::to_string(a));
        s.access_points[a]->run(s.stop_access_points);
      });
    }
    // Access points first: their goodbyes may still send records to the gateways.
    for (auto& t : access_point_threads) t.join();
    s.stop_gateways.store(true);
    for (auto& gw : s.gateways) gw->waker().notify_always();
    for (auto& t : gateway_threads) t.join();
  }
  if (s.election) s.election->stop();  // a primary resigns: its backup takes over at once
  if (s.http) s.http->stop();
  for (auto& link : s.broker_links) link->stop();
  s.log_totals();
}

LoopSnapshot Broker::totals() const { return impl_->totals(); }

std::vector<Broker::Loop> Broker::loops() const {
  std::vector<Loop> loops;
  if (impl_->gateways.empty()) {
    loops.push_back({"tw-loop", "single", impl_->access_points[0].get(), nullptr});
    return loops;
  }
  for (size_t g = 0; g < impl_->gateways.size(); ++g) {
    loops.push_back({"tw-gw-" + std::to_string(g), "gateway", nullptr, impl_->gateways[g].get()});
  }
  for (size_t a = 0; a < impl_->access_points.size(); ++a) {
    loops.push_back({"tw-ap-" + std::to_string(a), "access_point", impl_->access_points[a].get(), nullptr});
  }
  return loops;
}

size_t Broker::owner_of(std::string_view topic) const {
  return impl_->directory ? impl_->directory->shard_of(topic) : 0;
}

std::vector<LinkState> Broker::links() const {
  std::vector<LinkState> states;
  for (const auto& link : impl_->broker_links) states.push_back(link->state());
  return states;
}

HaStatus Broker::ha_status() const {
  const Impl& s = *impl_;
  HaStatus status;
  if (!s.election) return status;
  const ha::Role role = s.election->role();
  status.enabled = true;
  status.name = s.ha_name;
  status.primary = role.primary;
  status.serving = s.ha_role.serving();
  status.may_acknowledge = s.election->may_act_as_primary();
  status.epoch = role.epoch;
  status.leader = role.leader;
  status.ttl_s = s.config.ha.ttl_s;
  status.etcd = s.config.ha.etcd;
  return status;
}

const config::BrokerConfig& Broker::config() const { return impl_->config; }

auth::Authority* Broker::authority() const { return impl_->authority.get(); }

void Broker::stop() {
  impl_->stop_access_points.store(true, std::memory_order_relaxed);
  for (auto& ap : impl_->access_points) ap->waker().notify_always();
}

}  // namespace tw::tier
