// The delivery policy with two protocol encoders: the native one and a test
// encoding that shares nothing with it (test_encoder.h). The same scenarios
// must give the same streams, decoded into the same events: the policy is
// protocol-neutral. A third runs the test encoding as own copies through an
// acknowledged window (MQTT QoS 1's path): a full window holds back like a
// full queue. A real router and fanout, a socketpair whose far end the
// test reads only when it chooses, turns driven by hand.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "broker/router.h"
#include "tickwire/fields/field_list.h"
#include "native/encoder.h"
#include "reactor/reactor.h"
#include "session/delivery_policy.h"
#include "session/test_encoder.h"
#include "testlib/fields.h"

namespace tw::session {
namespace {

using session::testing::Event;

constexpr size_t kBound = 16 * 1024;
constexpr int kChannels = 20;

std::vector<uint8_t> quote(int64_t value) { return tw::testing::field_list({{22, value}}); }

int64_t value_of(const std::vector<uint8_t>& payload) {
  fields::FieldImage image;
  EXPECT_TRUE(image.merge(payload));
  return tw::testing::int_field(image, 22).value_or(-1);
}

// An outlet that is nothing but the policy over a socket: what a session is, without a protocol's requests.
// With a window (`window` > 0) every message goes as an own copy through an
// acknowledged window of that many slots, as MQTT's QoS 1 does, and the peer
// acknowledges what it read.
class PolicyOutlet final : public broker::Outlet, private OwnCopies {
 public:
  PolicyOutlet(DeliveryPolicy::Env env, output::Fanout& fanout, const Encoder& encoder, int fd, size_t window)
      : output_(fanout, *this), policy_(env, output_, encoder, *this), writer_(fd), encoder_(encoder), window_(window) {
    if (window_ > 0) policy_.set_own_copies(*this);
  }
  void acknowledge(size_t messages) {
    if (window_ == 0) return;
    in_flight_ -= std::min(in_flight_, messages);
    policy_.resume();
  }
  void send_image(const cache::Channel& ch, uint32_t request_id) override { note(policy_.send_image(ch, request_id)); }
  void send_stream_image(const cache::Channel& ch, SlowPolicy p) override {
    note(policy_.send_stream_image(ch, p, copy()));
  }
  void send_delivery(const broker::Delivery& d) override { note(policy_.send_delivery(d, copy())); }
  void send_status(const cache::Channel& ch, wire::ChannelState state, wire::Code code, std::string_view text,
                   bool introduce) override {
    policy_.send_status(ch, state, code, text, introduce);
  }
  void flush_output() override {
    auto result = output_.queue().flush(writer_);
    while (result != io::FlushResult::Error && policy_.resume()) result = output_.queue().flush(writer_);
  }
  std::string_view name() const override { return "policy-test"; }
  void note(DeliveryPolicy::Verdict v) { slow_consumer |= v == DeliveryPolicy::Verdict::SlowConsumer; }

  Copy copy() const { return window_ > 0 ? Copy{true, 1} : Copy{}; }
  Copy copy_of(const cache::Channel&) override { return copy(); }
  bool window_full() const override {
    const bool full = in_flight_ >= window_;
    found_full += full;
    return full;
  }
  void send_copy(const cache::Channel&, std::span<const uint8_t> frame, Copy) override {
    ASSERT_FALSE(window_full()) << "the policy sent through a full window";
    ++in_flight_;
    output_.copy(frame.size(), [&](std::span<uint8_t> out) {
      std::copy(frame.begin(), frame.end(), out.begin());
      return frame.size();
    });
  }
  void send_copy_image(const cache::Channel& channel, Copy) override {
    ASSERT_FALSE(window_full()) << "the policy sent through a full window";
    ++in_flight_;
    output_.copy(encoder_.image_max(channel, false), [&](std::span<uint8_t> out) {
      return encoder_.encode_image(out, channel, 0, false);
    });
  }

  output::Output output_;
  DeliveryPolicy policy_;
  io::FdWriter writer_;
  bool slow_consumer = false;
  mutable uint64_t found_full = 0;  // deliveries and refreshes that found the window full

 private:
  const Encoder& encoder_;
  const size_t window_;
  size_t in_flight_ = 0;
};

struct NativeProtocol {
  static constexpr size_t kWindow = 0;
  static const Encoder& encoder() { return native::NativeEncoder::instance(); }
  static void decode(std::vector<uint8_t>& in, std::vector<Event>& out) { testing::decode_native(in, out); }
};
struct TestProtocol {
  static constexpr size_t kWindow = 0;
  static const Encoder& encoder() {
    static const testing::TestEncoder e;
    return e;
  }
  static void decode(std::vector<uint8_t>& in, std::vector<Event>& out) { testing::decode_test(in, out); }
};
// The test encoding with acknowledgements: every message an own copy in a
// window of more slots than channels (a stream's first images all fit).
struct AcknowledgedProtocol : TestProtocol {
  static constexpr size_t kWindow = 32;
};

// Per channel, the stream as the peer saw it, with the stream rules checked.
struct ChannelView {
  uint64_t seq = 0;
  int64_t value = -1;
  uint64_t refreshes = 0;  // images that jumped the sequence
  uint64_t notices = 0;
  uint64_t announced = 0;  // dropped counts of the notices since the last update
};

template <typename Protocol>
class DeliveryPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0);
    int small = 4096;
    ::setsockopt(fds_[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    ::setsockopt(fds_[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    ::fcntl(fds_[0], F_SETFL, O_NONBLOCK);
    ::fcntl(fds_[1], F_SETFL, O_NONBLOCK);
  }
  void TearDown() override {
    if (outlet) router->remove_outlet(outlet.get());
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  void start(SlowPolicy policy, uint32_t conflate_ms = 0) {
    router = std::make_unique<broker::Router>(broker::RouterLimits{}, fanout);
    outlet = std::make_unique<PolicyOutlet>(DeliveryPolicy::Env{kBound, *router, counters, reactor}, fanout,
                                            Protocol::encoder(), fds_[0], Protocol::kWindow);
    for (int i = 0; i < kChannels; ++i) {
      cache::ChannelId id = 0;
      ASSERT_TRUE(router->advertise("T/" + std::to_string(i), wire::PayloadKind::FieldList, id).ok());
      ids.push_back(id);
      ASSERT_TRUE(router->publish(id, quote(0), false).ok());
    }
    ASSERT_TRUE(router->subscribe(outlet.get(), "T/>", policy, conflate_ms).ok());
    fanout.flush_all();
    drain();
    ASSERT_EQ(view.size(), static_cast<size_t>(kChannels));
  }
  void publish_round() {
    ++round;
    for (cache::ChannelId id : ids) ASSERT_TRUE(router->publish(id, quote(round), false).ok());
    fanout.flush_all();
  }
  size_t read_available() {
    size_t total = 0;
    uint8_t buf[65536];
    for (ssize_t n; (n = ::read(fds_[1], buf, sizeof buf)) > 0; total += static_cast<size_t>(n)) {
      in.insert(in.end(), buf, buf + n);
    }
    std::vector<Event> events;
    Protocol::decode(in, events);
    for (const Event& e : events) apply(e);
    outlet->acknowledge(std::count_if(events.begin(), events.end(), [](const Event& e) { return e.kind != 'S'; }));
    return total;
  }
  void apply(const Event& e) {
    ChannelView& c = view[e.channel];
    if (e.kind == 'I') {
      if (c.seq != 0 && e.seq != c.seq + 1) ++c.refreshes;
      c.seq = e.seq;
      c.value = value_of(e.body);
    } else if (e.kind == 'U') {
      if (c.seq == 0) errors.push_back("update before image");
      if (e.seq != c.seq + 1 + c.announced) errors.push_back("unannounced gap on " + std::to_string(e.channel));
      c.announced = 0;
      c.seq = e.seq;
      c.value = value_of(e.body);
    } else if (e.kind == 'S') {
      EXPECT_EQ(e.code, static_cast<uint16_t>(wire::Code::MessagesDropped));
      ++c.notices;
      c.announced += std::stoull(std::string(e.body.begin(), e.body.end()));  // notices in a row add up
    }
  }
  // The peer reads while the outlet writes, until both are idle.
  void drain() {
    for (int i = 0; i < 10'000; ++i) {
      size_t got = read_available();
      outlet->flush_output();
      if (got == 0 && outlet->output_.empty() && outlet->policy_.lagging_channels() == 0 && read_available() == 0) {
        return;
      }
    }
    FAIL() << "the outlet never drained";
  }
  void stall_until_congested() {
    for (int i = 0; i < 500 && outlet->policy_.lagging_channels() == 0 && !outlet->slow_consumer; ++i) {
      publish_round();
    }
  }

  int fds_[2] = {-1, -1};
  output::Fanout fanout{1 << 20};
  broker::Counters counters;
  reactor::Reactor reactor;
  std::unique_ptr<broker::Router> router;
  std::unique_ptr<PolicyOutlet> outlet;
  std::vector<cache::ChannelId> ids;
  int64_t round = 0;
  std::vector<uint8_t> in;
  std::map<uint32_t, ChannelView> view;
  std::vector<std::string> errors;
};

using Protocols = ::testing::Types<NativeProtocol, TestProtocol, AcknowledgedProtocol>;
TYPED_TEST_SUITE(DeliveryPolicyTest, Protocols);

TYPED_TEST(DeliveryPolicyTest, ConflateBoundsTheQueueAndEndsWithEveryChannelsFinalState) {
  this->start(SlowPolicy::Conflate);
  this->stall_until_congested();
  ASSERT_GT(this->outlet->policy_.lagging_channels(), 0u);
  for (int i = 0; i < 100; ++i) {
    this->publish_round();
    EXPECT_LE(this->outlet->output_.queued_bytes(), kBound + 4096);
  }
  this->drain();
  EXPECT_TRUE(this->errors.empty()) << this->errors.front();
  uint64_t refreshes = 0;
  for (const auto& [id, c] : this->view) {
    EXPECT_EQ(c.value, this->round) << "channel " << id;
    refreshes += c.refreshes;
  }
  EXPECT_GT(refreshes, 0u);
  EXPECT_EQ(refreshes, this->outlet->policy_.stats().refresh_images);
  EXPECT_EQ(this->counters.refresh_images, refreshes);
  EXPECT_FALSE(this->outlet->slow_consumer);
  if (TypeParam::kWindow != 0) {
    EXPECT_GT(this->outlet->found_full, 0u) << "the window never filled";
  }
}

TYPED_TEST(DeliveryPolicyTest, DropAnnouncesEveryGapWithItsExactCount) {
  this->start(SlowPolicy::Drop);
  this->stall_until_congested();
  for (int i = 0; i < 50; ++i) this->publish_round();
  this->drain();
  this->publish_round();  // each announced gap is consumed by the next update
  this->drain();
  EXPECT_TRUE(this->errors.empty()) << this->errors.front();
  uint64_t notices = 0;
  for (const auto& [id, c] : this->view) {
    EXPECT_EQ(c.value, this->round) << "channel " << id;
    notices += c.notices;
  }
  EXPECT_GT(notices, 0u);
  EXPECT_EQ(notices, this->outlet->policy_.stats().drop_notices);
  EXPECT_GT(this->outlet->policy_.stats().dropped_messages, 0u);
  if (TypeParam::kWindow != 0) {
    EXPECT_GT(this->outlet->found_full, 0u) << "the window never filled";
  }
}

TYPED_TEST(DeliveryPolicyTest, DisconnectEndsTheConnectionInsteadOfHoldingBack) {
  this->start(SlowPolicy::Disconnect);
  this->stall_until_congested();
  EXPECT_TRUE(this->outlet->slow_consumer);
  EXPECT_TRUE(this->outlet->policy_.stats().disconnected);
  EXPECT_EQ(this->outlet->policy_.lagging_channels(), 0u);
  if (TypeParam::kWindow != 0) {
    EXPECT_GT(this->outlet->found_full, 0u) << "the window never filled";
  }
}

TYPED_TEST(DeliveryPolicyTest, ConflationIntervalSendsOneMergedRefreshPerChannel) {
  this->start(SlowPolicy::Conflate, 1000);
  for (int i = 0; i < 5; ++i) this->publish_round();
  EXPECT_EQ(this->read_available(), 0u) << "held updates must not be sent before the interval";
  EXPECT_EQ(this->outlet->policy_.conflation_pending(), static_cast<size_t>(kChannels));
  ASSERT_EQ(this->outlet->policy_.send_due_refreshes(~uint64_t{0} / 2), DeliveryPolicy::Verdict::Keep);
  this->fanout.flush_all();
  this->drain();
  for (const auto& [id, c] : this->view) {
    EXPECT_EQ(c.value, this->round) << "channel " << id;
    EXPECT_EQ(c.refreshes, 1u) << "one merged refresh for five updates, channel " << id;
  }
  EXPECT_EQ(this->outlet->policy_.conflation_refreshes(), static_cast<uint64_t>(kChannels));
}

}  // namespace
}  // namespace tw::session
