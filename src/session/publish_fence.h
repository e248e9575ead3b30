// PublishFence: the order of one broker across loop threads, for protocols
// whose clients expect it (MQTT: Paho's suites subscribe on one connection
// and publish on another without waiting for the SUBACK). In a tiered
// broker a SUBSCRIBE read by one access point reaches the channels' owners
// through rings, and a PUBLISH another access point reads a moment later
// can reach an owner first. A publish that must not overtake waits (its
// connection is not read meanwhile) until every subscription the other
// loops had sent on when it was read is in effect. Null in a single-loop
// broker, where one thread applies a SUBSCRIBE before it reads anything else.
#pragma once
#include <cstdint>
#include <vector>

namespace tw::session {

class PublishFence {
 public:
  virtual ~PublishFence() = default;
  // True when no subscription sent by another loop is in flight: publish now.
  // Otherwise `ticket` is filled with what must be in effect first.
  virtual bool clear(std::vector<uint64_t>& ticket) const = 0;
  // True once everything `ticket` named is in effect.
  virtual bool reached(const std::vector<uint64_t>& ticket) const = 0;
};

}  // namespace tw::session
