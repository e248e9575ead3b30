// Shared steps of the integration tests: open a client through the
// handshake, and pass a fence through the broker.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>

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

// A fence: `pub` publishes one message on `topic` (publish id `publish_id`,
// registered by the caller) and `sub` (subscribed to it) reads until it
// arrives. The broker handles one connection's frames in order and keeps each
// connection's output in order, so when the fence arrives everything `pub`
// published before it has been delivered to `sub`.
bool pass_fence(RawClient& pub, uint32_t publish_id, RawClient& sub, StreamModel& model, const std::string& topic);

// A broker configuration with a native listener on a free port and an MQTT one on `mqtt_port`.
std::string native_and_mqtt_listeners(uint16_t mqtt_port);

// Subscribes `client` to `topic` (subscription `id`) and returns the payload
// of the image that starts the stream; nullopt (and a test failure) if none comes.
std::optional<std::string> subscribe_for_image(RawClient& client, uint32_t id, const std::string& topic, int wait_ms);

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
