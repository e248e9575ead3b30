#include "integration/it_support.h"

#include "testlib/fields.h"

namespace tw::it {

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
