// A gateway on its own thread, driven through its link the way an access
// point drives it: the test writes the access point's records and reads what
// the gateway sends back.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "testlib/fields.h"
#include "tier/gateway.h"
#include "tickwire/wire/codec.h"

namespace tw::tier {
namespace {

using Clock = std::chrono::steady_clock;

class GatewayLink : public ::testing::Test {
 protected:
  // Small rings and a low congestion bound, so the gateway spills and stops
  // reading its input within a few thousand messages.
  static constexpr size_t kRingBytes = 64u << 10;
  static constexpr size_t kCongestedBacklog = 256u << 10;

  void SetUp() override {
    gateway_.connect({&link_}, {&access_point_waker_});
    thread_ = std::thread([this] { gateway_.run(stop_); });
  }
  void TearDown() override {
    stop_.store(true);
    gateway_.waker().notify_always();
    thread_.join();
  }
  void send(const Record& r) { link_.to_gateway.push(r); }
  // A field-list channel the access point watches (the pattern "topic's
  // parent/>") and publishes to; returns its id.
  cache::ChannelId watched_field_list_channel(std::string_view topic) {
    const auto id = directory_.intern(topic, wire::PayloadKind::FieldList).id;
    const std::string pattern = std::string(topic.substr(0, topic.rfind('/'))) + "/>";
    Record interest{Op::Interest};
    interest.a = pattern;
    send(interest);
    Record advertise{Op::Advertise};
    advertise.id = id;
    advertise.a = topic;
    send(advertise);
    return id;
  }
  void hand_over() {
    link_.to_gateway.drain_spill();
    gateway_.waker().notify();
  }
  // Reads every frame the gateway sent so far into fn(frame).
  template <typename Fn>
  size_t read_frames(Fn&& fn) {
    size_t n = 0;
    SpscRing& ring = link_.to_access_point.ring();
    for (auto bytes = ring.read(); !bytes.empty(); bytes = ring.read()) {
      Record r;
      if (!read_record(bytes, r) || r.op != Op::Stream) continue;
      wire::Frame f;
      for (auto rest = r.bytes; wire::split_frame(rest, ~0u, f) == wire::SplitResult::Frame; rest = rest.subspan(f.size)) {
        fn(f);
        ++n;
      }
    }
    ring.release();
    return n;
  }

  config::BrokerConfig config_;
  cache::ChannelDirectory directory_{1, 1000};
  Gateway gateway_{config_, broker::RouterLimits{}, directory_, kCongestedBacklog};
  Link link_{kRingBytes};
  reactor::Reactor access_point_reactor_;
  Waker access_point_waker_{access_point_reactor_};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The access point reads nothing for a while: the gateway's output spills
// past its congestion bound and it stops reading. When the access point
// reads again, the spill must drain although the congested gateway makes no
// new output, and every message must arrive once, in order.
TEST_F(GatewayLink, CongestedGatewayDrainsItsSpillAndLosesNothing) {
  constexpr uint64_t kMessages = 20'000;
  const auto id = watched_field_list_channel("T/1");
  for (uint64_t k = 1; k <= kMessages; ++k) {
    const auto payload = testing::field_list({{22, static_cast<int64_t>(k)}});
    Record publish{Op::Publish};
    publish.id = id;
    publish.bytes = payload;
    send(publish);
    if (k % 500 == 0) hand_over();
  }

  uint64_t last_seq = 0;
  size_t out_of_order = 0;
  auto progress = Clock::now();
  while (last_seq < kMessages && Clock::now() - progress < std::chrono::seconds(20)) {
    hand_over();
    const size_t n = read_frames([&](const wire::Frame& f) {
      uint64_t seq = 0;
      if (wire::Update u; f.type == wire::MsgType::Update && wire::decode(f, u)) seq = u.seq;
      if (wire::Image i; f.type == wire::MsgType::Image && wire::decode(f, i)) seq = i.seq;
      if (seq == 0) return;
      if (seq != last_seq + 1) ++out_of_order;
      last_seq = seq;
    });
    if (n > 0) progress = Clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(last_seq, kMessages);
  EXPECT_EQ(out_of_order, 0u);
}

// The gateway trusts a field list its access point marked as validated, and
// validates one that is not marked (its access point did not know the kind).
TEST_F(GatewayLink, AnUnmarkedPublishIsStillValidated) {
  const auto id = watched_field_list_channel("V/1");
  const auto good = testing::field_list({{22, int64_t{1}}});
  const std::vector<uint8_t> malformed{0x00, 0x05};  // five fields announced, none there
  for (const auto* payload : {&good, &malformed, &good}) {
    Record publish{Op::Publish};
    publish.id = id;
    publish.flags = payload == &good ? kFlagValidated : 0;
    publish.bytes = *payload;
    send(publish);
  }
  std::vector<uint64_t> seqs;
  size_t not_good = 0;
  for (auto until = Clock::now() + std::chrono::seconds(20); seqs.size() < 2 && Clock::now() < until;) {
    hand_over();
    read_frames([&](const wire::Frame& f) {
      if (wire::Image i; f.type == wire::MsgType::Image && wire::decode(f, i)) seqs.push_back(i.seq);
      if (wire::Update u; f.type == wire::MsgType::Update && wire::decode(f, u)) {
        seqs.push_back(u.seq);
        not_good += !std::equal(u.payload.begin(), u.payload.end(), good.begin(), good.end());
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // The malformed one was refused: not numbered, not passed on.
  EXPECT_EQ(seqs, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(not_good, 0u);
}

// Another thread reads the gateway's counts while it runs: the snapshot the
// loop publishes each tick (ThreadSanitizer checks these reads in the tsan
// build). It catches up with what the gateway did, and it is whole: the one
// malformed publish is a bad payload, the others publishes.
TEST_F(GatewayLink, SnapshotIsReadWhileTheGatewayRuns) {
  constexpr uint64_t kGood = 10;
  const auto id = watched_field_list_channel("S/1");
  const auto good = testing::field_list({{22, int64_t{1}}});
  const std::vector<uint8_t> malformed{0x00, 0x05};
  for (uint64_t k = 0; k <= kGood; ++k) {
    Record publish{Op::Publish};
    publish.id = id;
    publish.bytes = k == kGood / 2 ? std::span<const uint8_t>(malformed) : std::span<const uint8_t>(good);
    send(publish);
  }
  hand_over();
  LoopSnapshot seen;
  for (auto until = Clock::now() + std::chrono::seconds(20); Clock::now() < until;) {
    seen = gateway_.snapshot();
    if (seen.router.publishes + seen.router.bad_payloads == kGood + 1) break;
    read_frames([](const wire::Frame&) {});
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(seen.router.publishes, kGood);
  EXPECT_EQ(seen.router.bad_payloads, 1u);
  EXPECT_GT(seen.loop.turns, 0u);
}

// MQTT 5 properties (docs/mqtt.md, "Message properties"): a Publish that
// carries them ahead of its payload gets an Origin record with them before
// its frame, whose payload is the payload alone; the next message, without
// them, gets no Origin record.
TEST_F(GatewayLink, APublishsPropertiesGoBeforeItsFrameInAnOriginRecord) {
  const auto id = directory_.intern("M/1", wire::PayloadKind::Opaque).id;
  Record interest{Op::Interest};
  interest.a = "M/>";
  send(interest);
  Record advertise{Op::Advertise};
  advertise.id = id;
  advertise.a = "M/1";
  advertise.flags = static_cast<uint8_t>(wire::PayloadKind::Opaque);
  send(advertise);
  const std::vector<uint8_t> props{0, 0, 0, 0, 0, 0, 0, 0, 0x03, 0, 1, 't'}, payload{'p'};
  Record with{Op::Publish};
  with.id = id;
  with.flags = kFlagImage | kFlagAttributes;
  with.arg = static_cast<uint32_t>(props.size());
  with.prefix = props;
  with.bytes = payload;
  send(with);
  Record without{Op::Publish};
  without.id = id;
  without.flags = kFlagImage;
  without.bytes = payload;
  send(without);
  std::vector<std::string> seen;  // "origin <bytes>" and "image <payload>", in order
  for (auto until = Clock::now() + std::chrono::seconds(20); seen.size() < 3 && Clock::now() < until;) {
    hand_over();
    SpscRing& ring = link_.to_access_point.ring();
    for (auto bytes = ring.read(); !bytes.empty(); bytes = ring.read()) {
      Record r;
      if (!read_record(bytes, r)) continue;
      if (r.op == Op::Origin) seen.push_back("origin " + std::string(r.bytes.begin(), r.bytes.end()));
      wire::Frame f;
      for (auto rest = r.op == Op::Stream ? r.bytes : std::span<const uint8_t>{};
           wire::split_frame(rest, ~0u, f) == wire::SplitResult::Frame; rest = rest.subspan(f.size)) {
        if (wire::Image i; f.type == wire::MsgType::Image && wire::decode(f, i)) {
          seen.push_back("image " + std::string(i.payload.begin(), i.payload.end()));
        }
      }
    }
    ring.release();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"origin " + std::string(props.begin(), props.end()), "image p", "image p"}));
}

}  // namespace
}  // namespace tw::tier
