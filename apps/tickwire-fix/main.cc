// tickwire-fix --config FILE [--port-file FILE]
//
// The FIX gateway (docs/fix.md): client sessions in, exchange sessions out,
// drop copies on the broker. Runs until SIGTERM or SIGINT. --port-file: once
// every FIX session is started, the metrics listener's port (0 without one)
// is written there, for scripts and tests that wait for the gateway.
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "fix/gateway.h"

namespace {

int usage() {
  std::fprintf(stderr, "usage: tickwire-fix --config FILE [--port-file FILE]\n");
  return 2;
}

bool write_port_file(const std::string& path, uint16_t port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << port << "\n";
    if (!out) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path, port_file;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--config" || arg == "--port-file") && i + 1 < argc) {
      (arg == "--config" ? config_path : port_file) = argv[++i];
    } else if (arg == "--help" || arg == "-h") {
      usage();
      return 0;
    } else {
      return usage();
    }
  }
  if (config_path.empty()) return usage();
  auto config = tw::fix::load_gateway_config(config_path);
  if (!config) {
    std::fprintf(stderr, "tickwire-fix: %s\n", config.error().message.c_str());
    return 1;
  }
  // Signals are taken by sigwait below, not by whichever thread they hit.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  tw::fix::Gateway gateway(std::move(*config));
  if (auto started = gateway.start(); !started) {
    std::fprintf(stderr, "tickwire-fix: %s\n", started.error().message.c_str());
    return 1;
  }
  if (!port_file.empty() && !write_port_file(port_file, gateway.metrics_port())) {
    std::fprintf(stderr, "tickwire-fix: cannot write %s\n", port_file.c_str());
    return 1;
  }
  std::fprintf(stderr, "tickwire-fix: started (metrics port %u)\n", gateway.metrics_port());
  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::fprintf(stderr, "tickwire-fix: %s, stopping\n", strsignal(sig));
  gateway.stop();
  return 0;
}
