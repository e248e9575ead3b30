// Shared steps of the integration tests: open a client through the
// handshake, and pass a fence through the broker.
#pragma once
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
// published before it has been delivered to `sub`.
bool pass_fence(RawClient& pub, uint32_t publish_id, RawClient& sub, StreamModel& model, const std::string& topic);

// A single-INT field-list payload (field 1).
std::vector<uint8_t> int_payload(int64_t value);

}  // namespace tw::it
