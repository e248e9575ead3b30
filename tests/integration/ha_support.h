// What the HA pair's tests share (it40, it41): a member's configuration and
// start, a new client's answer, polling, the admin API.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "it_support.h"
#include "testlib/etcd_server.h"
#include "testlib/process.h"

namespace tw::it {

constexpr int kHaTtl = 2;  // the lease's TTL of every member: etcd's minimum, the default

// A member's configuration: its own store with one queue ("orders", ORD/>;
// not replicated yet), the admin listener on `http_host` port 0.
std::string ha_config(const std::string& etcd_endpoint, const std::string& store,
                      const std::string& http_host = "127.0.0.1");

// Starts a member on `options` (port, host, command prefix), its store in
// `store`; anonymous clients allowed on a host other than loopback.
std::unique_ptr<BrokerProcess> start_member(const std::string& etcd_endpoint, const testing::TempDir& store,
                                            BrokerOptions options = {});
inline std::unique_ptr<BrokerProcess> start_member(const testing::EtcdServer& etcd, const testing::TempDir& store) {
  return start_member(etcd.endpoint(), store);
}

// What a new client gets: WELCOME (served), the ERROR's code and text, or nothing.
struct Answer {
  bool welcome = false;
  wire::Code code = wire::Code::Ok;
  std::string text;
};
Answer hello(uint16_t port);

// Polls `done` every 20 ms until it holds (true) or `wait` ends (false): a bound, never a measurement.
template <typename Done>
bool eventually(std::chrono::milliseconds wait, Done done) {
  const auto end = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

inline std::string address(const BrokerProcess& broker) { return "127.0.0.1:" + std::to_string(broker.port()); }
// What a backup tells a refused client.
inline std::string backup_of(const std::string& primary) {
  return "this broker is the HA backup; the primary is " + primary;
}
inline std::string backup_of(const BrokerProcess& primary) { return backup_of(address(primary)); }

// GET on a member's admin listener: the body of a 200, else "no answer".
std::string admin_get(const BrokerProcess& broker, const char* path);

}  // namespace tw::it
