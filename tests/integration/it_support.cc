#include "integration/it_support.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "cache/directory.h"
#include "testlib/fields.h"

namespace tw::it {

std::string native_and_mqtt_listeners(uint16_t mqtt_port) {
  return "[[listener]]\nprotocol = \"native\"\naddress = \"127.0.0.1:0\"\n"
         "[[listener]]\nprotocol = \"mqtt\"\naddress = \"127.0.0.1:" +
         std::to_string(mqtt_port) + "\"\n";
}

std::optional<std::string> subscribe_for_image(RawClient& client, uint32_t id, const std::string& topic, int wait_ms) {
  auto ack = client.subscribe(id, topic);
  EXPECT_TRUE(ack && ack->code == wire::Code::Ok);
  auto image = client.next_of_type(wire::MsgType::Image, wait_ms);
  EXPECT_TRUE(image);
  if (!image) return std::nullopt;
  auto decoded = image->as<wire::Image>();
  EXPECT_TRUE(decoded);
  if (!decoded) return std::nullopt;
  return std::string(decoded->payload.begin(), decoded->payload.end());
}

bool open_client(RawClient& client, uint16_t port, const std::string& name, std::string* why) {
  if (!client.connect(port)) {
    if (why) *why = "cannot connect to port " + std::to_string(port);
    return false;
  }
  auto welcome = client.hello(name);
  if (!welcome || welcome->type() != wire::MsgType::Welcome) {
    if (why) *why = welcome ? "expected WELCOME, got " + testing::describe(*welcome) : "no answer to HELLO";
    return false;
  }
  return true;
}

bool pass_fence(RawClient& pub, uint32_t publish_id, RawClient& sub, StreamModel& model, const std::string& topic) {
  uint64_t before = model.messages_on(topic);
  if (!pub.publish(publish_id, int_payload(static_cast<int64_t>(before)))) return false;
  return testing::collect_until(sub, model, [&] { return model.messages_on(topic) > before; });
}

uint32_t gateways_under_test() {
  const char* threads = std::getenv("TW_TEST_THREADS");
  unsigned gateways = 0;
  unsigned access_points = 0;
  if (threads == nullptr || std::sscanf(threads, "%u+%u", &gateways, &access_points) != 2 || gateways == 0) return 1;
  return gateways;
}

uint32_t gateway_of(const std::string& topic) {
  static const cache::ChannelDirectory shards(gateways_under_test(), std::numeric_limits<size_t>::max());
  return shards.shard_of(topic);
}

std::string topic_beside(const std::string& topic, const std::string& prefix) {
  for (int n = 0;; ++n) {
    std::string beside = prefix + "/" + std::to_string(n);
    if (gateway_of(beside) == gateway_of(topic)) return beside;
  }
}

Fence::Fence(std::string prefix, uint32_t first_publish_id)
    : prefix_(std::move(prefix)), first_publish_id_(first_publish_id) {
  std::vector<std::string> owned(gateways_under_test());
  size_t found = 0;
  for (int n = 0; found < owned.size(); ++n) {
    std::string topic = prefix_ + "/" + std::to_string(n);
    std::string& slot = owned[gateway_of(topic)];
    if (slot.empty()) {
      slot = std::move(topic);
      ++found;
    }
  }
  topics_ = std::move(owned);
}

bool Fence::covers(const std::string& topic) const {
  return std::find(topics_.begin(), topics_.end(), topic) != topics_.end();
}

bool Fence::register_on(RawClient& client) const {
  for (size_t i = 0; i < topics_.size(); ++i) {
    if (!client.register_topic(first_publish_id_ + static_cast<uint32_t>(i), wire::PayloadKind::FieldList, topics_[i])) {
      return false;
    }
  }
  return true;
}

bool Fence::subscribe(RawClient& client, uint32_t request_id) const {
  auto ack = client.subscribe(request_id, prefix_ + "/>");
  return ack && ack->code == wire::Code::Ok;
}

bool Fence::pass(RawClient& pub, RawClient& sub, StreamModel& model) const {
  // Each pass publishes its own number, and waits for it as the latest state
  // of every fence channel: a fence message of an earlier pass (another
  // subscriber's barrier, say) may still be on its way to `sub`. No other pass
  // runs meanwhile (a test's steps are sequential) and each channel keeps its
  // order, so the number does arrive as the latest.
  static int64_t passes = 0;
  const int64_t mine = ++passes;
  for (size_t i = 0; i < topics_.size(); ++i) {
    if (!pub.publish(first_publish_id_ + static_cast<uint32_t>(i), int_payload(mine))) return false;
  }
  return testing::collect_until(sub, model, [&] {
    for (const std::string& topic : topics_) {
      const auto* ch = model.find(topic);
      if (ch == nullptr || testing::int_field(ch->image, 1) != mine) return false;
    }
    return true;
  });
}

bool reach_seq(RawClient& sub, StreamModel& model, const std::string& topic, uint64_t seq) {
  return testing::collect_until(sub, model, [&] {
    const auto* ch = model.find(topic);
    return ch && ch->seq >= seq;
  });
}

std::vector<uint8_t> int_payload(int64_t value) { return testing::field_list({{1, value}}); }

::testing::AssertionResult HealthyPair::open(uint16_t port, const std::string& prefix) {
  std::string why;
  if (!open_client(pub, port, prefix + "-pub", &why) || !open_client(sub, port, prefix + "-sub", &why)) {
    return ::testing::AssertionFailure() << why;
  }
  if (!pub.register_topic(kPublishId, wire::PayloadKind::FieldList, kTopic)) {
    return ::testing::AssertionFailure() << "cannot register " << kTopic;
  }
  auto ack = sub.subscribe(1, "HEALTHY/>");
  if (!ack || ack->code != wire::Code::Ok) return ::testing::AssertionFailure() << "cannot subscribe to HEALTHY/>";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult HealthyPair::one_more_arrives(BrokerProcess& broker) {
  if (!broker.alive()) return ::testing::AssertionFailure() << "broker died: " << broker.err();
  if (!pass_fence(pub, kPublishId, sub, model, kTopic)) {
    return ::testing::AssertionFailure() << "the healthy pair stopped working";
  }
  if (model.messages_on(kTopic) != ++messages) {
    return ::testing::AssertionFailure() << "expected " << messages << " updates, got " << model.messages_on(kTopic);
  }
  if (!model.errors().empty()) return ::testing::AssertionFailure() << model.errors().front();
  return ::testing::AssertionSuccess();
}

}  // namespace tw::it
