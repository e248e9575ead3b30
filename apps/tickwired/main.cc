// tickwired: reads its configuration, listens, and runs the broker on this
// thread until SIGINT or SIGTERM asks for a graceful shutdown. SIGHUP reloads
// the TLS listeners' certificates (docs/security.md).
//
// Exit codes: 0 after a graceful shutdown (and for --help, --version);
// 1 when the broker cannot listen or the port file cannot be written;
// 2 for a bad flag or a bad configuration.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <memory>

#include "base/log.h"
#include "admin/api.h"
#include "admin/sys_topics.h"
#include "http/route.h"
#include "tier/broker.h"
#include "web/assets.h"
#include "command_line.h"
#include "systemd.h"

namespace {

// The broker the signal handlers act on. Atomic: a handler runs on whichever
// thread the signal lands on (the auth verifier's, say) while the main
// thread sets it and clears it (a lock-free atomic is async-signal-safe).
std::atomic<tw::tier::Broker*> g_broker{nullptr};
static_assert(std::atomic<tw::tier::Broker*>::is_always_lock_free);

void on_stop_signal(int) {
  if (tw::tier::Broker* broker = g_broker.load(std::memory_order_acquire)) broker->stop();
}

void on_reload_signal(int) {
  tw::tier::Broker* broker = g_broker.load(std::memory_order_acquire);
  if (broker == nullptr) return;
  broker->reload_tls();
  broker->reload_auth();
}

// Clears g_broker when serve() returns, on every path: the broker goes with it.
struct SignalTarget {
  ~SignalTarget() { g_broker.store(nullptr, std::memory_order_release); }
};

// SA_RESETHAND: a second SIGINT/SIGTERM during a stuck shutdown kills the process.
void install_signal_handlers(tw::tier::Broker& broker) {
  g_broker.store(&broker, std::memory_order_release);
  struct sigaction stop {};
  stop.sa_handler = on_stop_signal;
  stop.sa_flags = SA_RESETHAND;
  sigemptyset(&stop.sa_mask);
  sigaction(SIGINT, &stop, nullptr);
  sigaction(SIGTERM, &stop, nullptr);

  struct sigaction reload {};
  reload.sa_handler = on_reload_signal;
  sigemptyset(&reload.sa_mask);
  sigaction(SIGHUP, &reload, nullptr);

  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, nullptr);  // a closed peer is an EPIPE, not a death
}

// Written to a temporary name, then renamed, so a reader never sees half a number.
// The native port, then on a second line the HTTP listener's port when there is one.
tw::Status write_port_file(const std::string& path, uint16_t port, uint16_t http_port) {
  std::string temp = path + ".tmp." + std::to_string(getpid());
  FILE* file = std::fopen(temp.c_str(), "w");
  if (file == nullptr) return tw::Error{std::strerror(errno)};
  bool written = std::fprintf(file, "%u\n", static_cast<unsigned>(port)) > 0;
  if (http_port != 0) written = std::fprintf(file, "%u\n", static_cast<unsigned>(http_port)) > 0 && written;
  written = (std::fclose(file) == 0) && written;
  if (!written || std::rename(temp.c_str(), path.c_str()) != 0) {
    int saved = errno;
    std::remove(temp.c_str());
    return tw::Error{std::strerror(saved)};
  }
  return tw::Ok{};
}

// Connections are file descriptors: allow as many as the hard limit does,
// so max_connections, not the default soft limit of 1024, is the bound.
rlimit raise_fd_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return limit;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) getrlimit(RLIMIT_NOFILE, &limit);
  }
  return limit;
}

// Once listening, what the kernel granted (info: a broker sized for fewer
// connections than the default max_connections is normal).
void log_fd_limit(const rlimit& limit, const tw::config::BrokerConfig& config) {
  const auto granted = static_cast<unsigned long long>(limit.rlim_cur);
  if (granted < config.limits.max_connections + 64ull) {
    TW_INFO("file descriptor limit %llu (the hard limit %llu) is below max_connections %u: connections past it "
            "are refused, with an ERROR line (raise it with ulimit -Hn or LimitNOFILE)",
            granted, static_cast<unsigned long long>(limit.rlim_max), config.limits.max_connections);
  } else {
    TW_INFO("file descriptor limit %llu", granted);
  }
}

// What the HTTP listener answers (docs/operations.md): the admin API, /metrics, /healthz, /readyz.
tw::http::Routes http_routes(tw::admin::Api& api) {
  tw::http::Routes routes;
  api.install(routes);
  tw::web::add_routes(routes);  // the console and examples/web, from the binary (src/web)
  return routes;
}

int serve(const tw::tickwired::Invocation& invocation) {
  const tw::config::BrokerConfig& config = invocation.config;
  const rlimit fd_limit = raise_fd_limit();
  std::unique_ptr<tw::admin::Api> api;  // declared first: the broker (and its HTTP thread) goes before it
  tw::tier::Broker broker(config);
  api = std::make_unique<tw::admin::Api>(broker);
  // Before the port file is written: whoever reads it may signal us at once.
  SignalTarget signal_target;  // declared after the broker: cleared before it goes
  install_signal_handlers(broker);
  broker.serve(http_routes(*api));
  if (auto status = broker.listen(); !status) {
    // The error already reads "cannot listen on HOST:PORT: <reason>".
    std::cerr << "tickwired: " << status.error().message << "\n";
    return tw::tickwired::kExitRuntimeError;
  }
  for (const std::string& listener : broker.listening()) TW_INFO("listening on %s", listener.c_str());
  log_fd_limit(fd_limit, config);
  if (!invocation.port_file.empty()) {
    if (auto status = write_port_file(invocation.port_file, broker.port(), broker.http_port()); !status) {
      std::cerr << "tickwired: cannot write port file " << invocation.port_file << ": "
                << status.error().message << "\n";
      return tw::tickwired::kExitRuntimeError;
    }
  }
  tw::admin::SysTopics sys_topics(api->statistics(), config.sys_interval_ms);
  sys_topics.start();
  tw::tickwired::Systemd systemd;
  systemd.ready();
  systemd.start_watchdog(broker);
  broker.run();
  sys_topics.stop();
  systemd.stopping();
  systemd.stop_watchdog();
  return tw::tickwired::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  auto parsed = tw::tickwired::parse_command_line(argc, argv, std::cout, std::cerr);
  if (!parsed.invocation) return parsed.exit_code;
  tw::log::set_level(parsed.invocation->config.log_level);
  return serve(*parsed.invocation);
}
