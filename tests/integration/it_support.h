// Shared steps of the integration tests: open a client through the
// handshake, and pass a fence through the broker.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
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
// published before it *on the fence's own channel* has been delivered to
// `sub`. Across channels only the single-threaded broker keeps that order: in
// thread tiers (--threads) two channels may be owned by two gateway threads,
// and the protocol promises order per channel only (docs/protocol.md, "Order"),
// so a fence on another topic proves nothing about a channel; wait for that
// channel's seq with reach_seq instead.
bool pass_fence(RawClient& pub, uint32_t publish_id, RawClient& sub, StreamModel& model, const std::string& topic);

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
