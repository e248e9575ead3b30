// A real etcd (Debian's etcd-server, /usr/bin/etcd) for the HA tests: one
// member on loopback ports the test picks, in a data folder of its own that
// is removed with it. pause()/resume() stop and continue the process
// (SIGSTOP/SIGCONT): etcd unreachable without losing its state.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "testlib/process.h"

namespace tw::testing {

class EtcdServer {
 public:
  static constexpr const char* kPath = "/usr/bin/etcd";
  static bool installed();

  // Starts it on `host` (an address of this machine; loopback as well) and waits until it answers /health.
  explicit EtcdServer(std::string host = "127.0.0.1");
  ~EtcdServer();
  EtcdServer(const EtcdServer&) = delete;
  EtcdServer& operator=(const EtcdServer&) = delete;

  bool ok() const { return ok_; }
  std::string endpoint() const { return "http://" + host_ + ":" + std::to_string(client_port_); }
  const std::string& log() const { return log_; }  // why it did not start
  void pause();
  void resume();

 private:
  bool start();
  bool healthy(int wait_ms) const;

  std::string host_;
  std::string dir_;
  uint16_t client_port_ = 0;
  std::unique_ptr<Process> process_;
  bool ok_ = false;
  std::string log_;
};

}  // namespace tw::testing
