// The broker: owns the listening socket, the reactor and the channel registry,
// and runs them on the calling thread. One Broker = one reactor thread today;
// thread tiers will run several reactors, each owning its own state.
#pragma once
#include <cstdint>
#include <memory>

#include "base/result.h"
#include "config/config.h"

namespace tw::broker {

struct Counters;  // see broker/counters.h

class Broker {
 public:
  explicit Broker(config::BrokerConfig config);
  ~Broker();
  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;

  // Binds and listens; a one-line error when the address is in use or invalid.
  Status listen();
  uint16_t port() const;  // the bound port, useful with port 0
  // Runs the loop until stop(); returns after a graceful shutdown.
  void run();
  // Safe from any thread and from a signal handler: wakes the loop to shut down.
  void stop();
  const Counters& counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tw::broker
