// Shared steps of the integration tests: open a client through the
// handshake, and pass a fence through the broker.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "testlib/broker_process.h"
#include "testlib/raw_client.h"
#include "testlib/stream_model.h"

namespace tw::it {

using testing::BrokerOptions;
using testing::BrokerProcess;
using testing::OwnedFrame;
using testing::RawClient;
using testing::StreamModel;

// Connects and completes HELLO/WELCOME; false (with the reason in *why) otherwise.
bool open_client(RawClient& client, uint16_t port, const std::string& name, std::string* why = nullptr);

// A fence on one channel: `pub` publishes one message on `topic` (publish id `publish_id`,
// registered by the caller) and `sub` (subscribed to it) reads until it
// arrives; then everything `pub` published before on `topic` has been
// delivered to `sub`. Only on that topic: across topics, use Fence.
bool pass_fence(RawClient& pub, uint32_t publish_id, RawClient& sub, StreamModel& model, const std::string& topic);

// The gateways of the broker under test: G of TW_TEST_THREADS "G+A" (the
// tiered broker), 1 for the single-threaded one (one loop owns every channel).
uint32_t gateways_under_test();
// The gateway that owns `topic` in this run, by the broker's own shard function.
uint32_t gateway_of(const std::string& topic);
// "<prefix>/<n>" for the first n whose gateway is `topic`'s: messages on both
// go through one gateway, so one's order says something about the other's.
std::string topic_beside(const std::string& topic, const std::string& prefix);

// A fence through every gateway. The broker keeps order per channel only
// (docs/protocol.md, "Order"): in the tiered broker a channel is owned by the
// gateway its topic hashes to, so a fence on one topic says nothing about
// messages on topics of another gateway. Each gateway owns one of these
// topics ("<prefix>/<n>", chosen with the broker's own shard function), and a
// pass publishes on all of them: when every one has arrived, everything the
// publisher sent before, on any topic, has been delivered to the subscriber
// (one connection -> one ring to each gateway, in order -> one ring to the
// subscriber's access point, in order).
//
// No fence is needed after a SUBSCRIBE: its OK ACK means every gateway holds
// the subscription (docs/protocol.md, "Subscribing").
class Fence {
 public:
  Fence(std::string prefix, uint32_t first_publish_id);
  const std::vector<std::string>& topics() const { return topics_; }
  bool covers(const std::string& topic) const;
  // `client` registers every fence topic (publish ids first_publish_id, +1, ...).
  bool register_on(RawClient& client) const;
  // `client` subscribes to every fence topic (one pattern, `request_id`); true on OK.
  bool subscribe(RawClient& client, uint32_t request_id) const;
  // `pub` publishes once on every fence topic, `sub` reads until all arrived.
  bool pass(RawClient& pub, RawClient& sub, StreamModel& model) const;

 private:
  std::string prefix_;
  uint32_t first_publish_id_;
  std::vector<std::string> topics_;
};

// A broker configuration with a native listener on a free port and an MQTT one on `mqtt_port`.
std::string native_and_mqtt_listeners(uint16_t mqtt_port);

// Subscribes `client` to `topic` (subscription `id`) and returns the payload
// of the image that starts the stream; nullopt (and a test failure) if none comes.
std::optional<std::string> subscribe_for_image(RawClient& client, uint32_t id, const std::string& topic, int wait_ms);

// Reads `sub` into `model` until `topic`'s stream reached `seq` (the broker
// numbers a channel's messages 1, 2, ...: its seq counts what was published).
bool reach_seq(RawClient& sub, StreamModel& model, const std::string& topic, uint64_t seq);

// A single-INT field-list payload (field 1).
std::vector<uint8_t> int_payload(int64_t value);

// An innocent publisher and subscriber beside bad input or an attack: each
// update the publisher sends on HEALTHY/T must reach the subscriber, in order.
struct HealthyPair {
  static constexpr uint32_t kPublishId = 1;
  static constexpr const char* kTopic = "HEALTHY/T";
  // Connects both (names `prefix`-pub and -sub), registers and subscribes to HEALTHY/>.
  ::testing::AssertionResult open(uint16_t port, const std::string& prefix);
  // The broker is alive and one more update reaches the subscriber in sequence.
  ::testing::AssertionResult one_more_arrives(BrokerProcess& broker);

  RawClient pub;
  RawClient sub;
  StreamModel model;
  uint64_t messages = 0;
};

}  // namespace tw::it
