// Every example frame in docs/protocol.md (the ```hex NAME blocks) must be a
// frame of the named type that decodes and re-encodes to the same bytes, so
// the specification cannot drift from the codec.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "reencode.h"
#include "wire_test_support.h"

namespace tw::wiretest {
namespace {

using namespace tw::wire;

struct DocExample {
  std::string name;
  Bytes frame;
};

std::vector<DocExample> examples_in(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::vector<DocExample> out;
  std::string line;
  const std::string fence = "```hex ";
  while (std::getline(in, line)) {
    if (line.rfind(fence, 0) != 0) continue;
    DocExample ex{line.substr(fence.size()), {}};
    std::string hex_text;
    while (std::getline(in, line) && line.rfind("```", 0) != 0) hex_text += line + " ";
    ex.frame = from_hex(hex_text);
    out.push_back(std::move(ex));
  }
  return out;
}

const std::map<std::string, MsgType>& types_by_name() {
  static const std::map<std::string, MsgType> names = {
      {"HELLO", MsgType::Hello},         {"SUBSCRIBE", MsgType::Subscribe}, {"UNSUBSCRIBE", MsgType::Unsubscribe},
      {"SNAPSHOT", MsgType::Snapshot},   {"REGISTER", MsgType::Register},   {"PUBLISH", MsgType::Publish},
      {"HEARTBEAT", MsgType::Heartbeat}, {"WELCOME", MsgType::Welcome},     {"ACK", MsgType::Ack},
      {"CHANNEL", MsgType::Channel},     {"IMAGE", MsgType::Image},         {"UPDATE", MsgType::Update},
      {"STATUS", MsgType::Status},       {"ERROR", MsgType::Error},         {"RELOAD", MsgType::Reload},
      {"GUARANTEED_PUBLISH", MsgType::GuaranteedPublish}, {"BIND", MsgType::Bind}, {"UNBIND", MsgType::Unbind},
      {"CONSUMER_ACK", MsgType::ConsumerAck}, {"NACK", MsgType::Nack}, {"PUBLISH_ACK", MsgType::PublishAck},
      {"DELIVER", MsgType::Deliver},
  };
  return names;
}

TEST(ProtocolDoc, EveryExampleFrameDecodesAndReencodesIdentically) {
  auto examples = examples_in(std::string(TW_SOURCE_DIR) + "/docs/protocol.md");
  ASSERT_GE(examples.size(), 5u) << "docs/protocol.md lost its ```hex examples";
  for (const DocExample& ex : examples) {
    SCOPED_TRACE(ex.name);
    auto type = types_by_name().find(ex.name);
    ASSERT_NE(type, types_by_name().end()) << "unknown message name in a ```hex block";
    Frame f = split_one(ex.frame);
    EXPECT_EQ(f.type, type->second);
    Bytes again(ex.frame.size());
    ASSERT_EQ(reencode(f, again), ex.frame.size()) << "does not decode";
    EXPECT_EQ(hex(again), hex(ex.frame));
  }
}

}  // namespace
}  // namespace tw::wiretest
