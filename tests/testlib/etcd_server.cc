#include "testlib/etcd_server.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "testlib/blocking_socket.h"
#include "testlib/broker_process.h"

namespace tw::testing {

bool EtcdServer::installed() { return access(kPath, X_OK) == 0; }

EtcdServer::EtcdServer(std::string host) : host_(std::move(host)) {
  char pattern[] = "/tmp/tw-etcd.XXXXXX";
  if (mkdtemp(pattern) == nullptr) return;
  dir_ = pattern;
  // A port picked free can be taken before etcd binds it: try again then.
  for (int attempt = 0; attempt < 3 && !ok_; ++attempt) ok_ = start();
}

EtcdServer::~EtcdServer() {
  if (process_) {
    process_->send_signal(SIGCONT);
    process_->send_signal(SIGKILL);
    process_->wait(5000);
  }
  if (!dir_.empty()) std::filesystem::remove_all(dir_);
}

bool EtcdServer::start() {
  client_port_ = pick_free_port();
  const uint16_t peer_port = pick_free_port();
  const std::string client = endpoint();
  // Loopback too, where /health is asked (BlockingSocket).
  const std::string loopback = "http://127.0.0.1:" + std::to_string(client_port_);
  const std::string listen = client == loopback ? client : client + "," + loopback;
  const std::string peer = "http://" + host_ + ":" + std::to_string(peer_port);
  std::filesystem::remove_all(dir_ + "/data");
  process_ = std::make_unique<Process>(
      kPath, std::vector<std::string>{"--name", "tw-test", "--data-dir", dir_ + "/data", "--listen-client-urls", listen,
                                      "--advertise-client-urls", client, "--listen-peer-urls", peer,
                                      "--initial-advertise-peer-urls", peer, "--initial-cluster", "tw-test=" + peer,
                                      "--log-level", "warn", "--logger", "zap"});
  if (process_->started() && healthy(15'000)) return true;
  log_ = process_->err();
  process_->send_signal(SIGKILL);
  process_->wait(5000);
  process_.reset();
  return false;
}

bool EtcdServer::healthy(int wait_ms) const {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (std::chrono::steady_clock::now() < until) {
    if (!process_->alive()) return false;
    BlockingSocket socket(client_port_, 1000);
    if (socket.connected() && socket.send("GET /health HTTP/1.0\r\n\r\n") && socket.read_to_close() &&
        socket.received().find("\"health\":\"true\"") != std::string::npos) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

void EtcdServer::pause() { process_->send_signal(SIGSTOP); }
void EtcdServer::resume() { process_->send_signal(SIGCONT); }

}  // namespace tw::testing
