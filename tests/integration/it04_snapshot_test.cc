// SNAPSHOT: the cached image of one topic on request, apart from the stream.
#include <gtest/gtest.h>

#include "integration/it_support.h"
#include "testlib/fields.h"

namespace tw::it {
namespace {

using testing::field_list;
using wire::PayloadKind;

constexpr uint32_t kFenceId = 100;  // the fence's publish ids: 100, 101, ... (one per gateway)

class Snapshot : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(broker.ready()) << broker.err();
    std::string why;
    ASSERT_TRUE(open_client(pub, broker.port(), "pub", &why)) << why;
    ASSERT_TRUE(open_client(client, broker.port(), "client", &why)) << why;
    ASSERT_TRUE(pub.register_topic(1, PayloadKind::FieldList, "SNAP/A"));
    ASSERT_TRUE(pub.register_topic(2, PayloadKind::FieldList, "SNAP/EMPTY"));
    ASSERT_TRUE(fence.register_on(pub));
    ASSERT_TRUE(fence.subscribe(client, 1000));
  }
  const Fence fence{"FENCE", kFenceId};
  BrokerProcess broker;
  RawClient pub;
  RawClient client;
  StreamModel model;
};

TEST_F(Snapshot, FoundTopicAnswersChannelImageAndAck) {
  ASSERT_TRUE(pub.publish(1, field_list({{1, int64_t{5}}, {2, std::string("x")}})));
  ASSERT_TRUE(pub.publish(1, field_list({{1, int64_t{6}}})));
  ASSERT_TRUE(fence.pass(pub, client, model));

  auto reply = client.snapshot(42, "SNAP/A");
  ASSERT_TRUE(reply.ack);
  EXPECT_EQ(reply.ack->code, wire::Code::Ok) << reply.ack->text;
  ASSERT_TRUE(reply.channel && reply.image) << "no CHANNEL+IMAGE before the ACK";
  auto intro = reply.channel->as<wire::ChannelIntro>();
  auto image = reply.image->as<wire::Image>();
  ASSERT_TRUE(intro && image);
  EXPECT_EQ(intro->topic, "SNAP/A");
  EXPECT_EQ(intro->kind, PayloadKind::FieldList);
  EXPECT_EQ(image->channel_id, intro->channel_id);
  EXPECT_EQ(image->request_id, 42u);
  EXPECT_EQ(image->seq, 2u);
  fields::FieldImage got;
  fields::FieldImage expected;
  ASSERT_TRUE(got.replace(image->payload));
  ASSERT_TRUE(expected.replace(field_list({{1, int64_t{6}}, {2, std::string("x")}})));
  std::string why;
  EXPECT_TRUE(testing::same_fields(got, expected, &why)) << why;
}

TEST_F(Snapshot, UnknownOrEmptyTopicIsNotFound) {
  for (const char* topic : {"SNAP/NEVER", "SNAP/EMPTY"}) {
    auto reply = client.snapshot(7, topic);
    ASSERT_TRUE(reply.ack) << topic;
    EXPECT_EQ(reply.ack->request_id, 7u);
    EXPECT_EQ(reply.ack->code, wire::Code::NotFound) << topic;
    EXPECT_FALSE(reply.image) << topic;
  }
  auto reply = client.snapshot(8, "SNAP/*");
  ASSERT_TRUE(reply.ack);
  EXPECT_EQ(reply.ack->code, wire::Code::InvalidTopic);
  EXPECT_TRUE(broker.alive());
}

TEST_F(Snapshot, DoesNotSubscribe) {
  ASSERT_TRUE(pub.publish(1, field_list({{1, int64_t{1}}})));
  ASSERT_TRUE(fence.pass(pub, client, model));
  auto reply = client.snapshot(3, "SNAP/A");
  ASSERT_TRUE(reply.ack && reply.ack->code == wire::Code::Ok);
  ASSERT_TRUE(pub.publish(1, field_list({{1, int64_t{2}}})));
  ASSERT_TRUE(fence.pass(pub, client, model));
  EXPECT_EQ(model.messages_on("SNAP/A"), 0u) << "a snapshot must not start a stream";
}

TEST_F(Snapshot, SnapshotImageIsNotConfusedWithTheStream) {
  auto ack = client.subscribe(1, "SNAP/A");
  ASSERT_TRUE(ack && ack->code == wire::Code::Ok);
  for (int64_t i = 1; i <= 5; ++i) ASSERT_TRUE(pub.publish(1, field_list({{1, i}})));
  ASSERT_TRUE(fence.pass(pub, client, model));
  // Snapshots in the middle of a live stream, sent without waiting, interleaved with updates.
  for (uint32_t req = 10; req < 15; ++req) {
    ASSERT_TRUE(client.send_snapshot(req, "SNAP/A"));
    ASSERT_TRUE(pub.publish(1, field_list({{1, int64_t{req}}})));
  }
  ASSERT_TRUE(fence.pass(pub, client, model));
  auto reply = client.snapshot(99, "SNAP/A");
  ASSERT_TRUE(reply.ack && reply.ack->code == wire::Code::Ok && reply.image);
  ASSERT_TRUE(fence.pass(pub, client, model));

  const auto* ch = model.find("SNAP/A");
  ASSERT_NE(ch, nullptr);
  EXPECT_EQ(ch->images, 1u) << "snapshot IMAGEs counted as stream images";
  EXPECT_EQ(ch->seq, 10u);
  EXPECT_EQ(ch->messages(), 10u);
  EXPECT_EQ(model.snapshot_images(), 5u);
  EXPECT_EQ(testing::int_field(ch->image, 1), 14);
  EXPECT_EQ(reply.image->as<wire::Image>()->seq, 10u);
  EXPECT_TRUE(model.errors().empty()) << model.errors().front();
}

}  // namespace
}  // namespace tw::it
