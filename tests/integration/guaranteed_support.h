// Helpers shared by the guaranteed-messaging tests (it30_*): a client's
// options for a loopback broker, and a bounded poll loop.
#pragma once
#include <chrono>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "tickwire/client/client.h"

namespace tw::it {

inline client::Options options_for(uint16_t port, const std::string& name) {
  client::Options o;
  o.port = port;
  o.client_name = name;
  o.reconnect_min_ms = 50;
  o.reconnect_max_ms = 200;
  o.close_linger_ms = 1000;
  return o;
}

inline std::span<const uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// Polls the clients until `done` or the deadline (a bound, never a measurement).
template <typename Done>
bool poll_until(std::vector<client::Client*> clients, Done done, int timeout_ms = 15'000) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    for (int i = 0; i < 10; ++i) {
      for (client::Client* c : clients) c->poll(0);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  return true;
}

}  // namespace tw::it
