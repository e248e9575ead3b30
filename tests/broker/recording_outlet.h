// An outlet that records what the router sends it, decoding the real frames
// the router encodes for stream messages.
#pragma once
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "output/fanout.h"
#include "broker/outlet.h"
#include "native/encoder.h"
#include "tickwire/wire/codec.h"

namespace tw::broker {

struct Event {
  std::string kind;  // image, update, snapshot, status, request, release, info
  std::string topic;
  uint64_t seq = 0;
  wire::ChannelState state = wire::ChannelState::Ok;
  wire::Code code = wire::Code::Ok;
  uint32_t stream_id = 0;
  SlowPolicy policy = SlowPolicy::Default;  // stream images and deliveries: the policy they carried
  uint32_t conflate_ms = 0;                 // deliveries: the conflation interval they carried
};

// A delivery's stream frame, decoded as the subscriber would read it.
struct DecodedDelivery {
  cache::ChannelId channel_id = 0;
  uint64_t seq = 0;
  std::span<const uint8_t> payload;
};
inline bool decode_delivery(const Delivery& d, DecodedDelivery& out) {
  wire::Frame frame;
  if (wire::split_frame(d.frames.get(native::NativeEncoder::instance()), 1u << 20, frame) != wire::SplitResult::Frame) return false;
  if (d.image) {
    wire::Image m;
    if (!wire::decode(frame, m)) return false;
    out = {m.channel_id, m.seq, m.payload};
  } else {
    wire::Update m;
    if (!wire::decode(frame, m)) return false;
    out = {m.channel_id, m.seq, m.payload};
  }
  return true;
}

class RecordingOutlet final : public Outlet, public ProviderOutlet, public RequesterOutlet {
 public:
  explicit RecordingOutlet(output::Fanout& f, std::string name = "outlet") : fanout_(f), name_(std::move(name)) {}
  ProviderOutlet* as_provider() override { return this; }
  RequesterOutlet* as_requester() override { return this; }

  void send_image(const cache::Channel& ch, uint32_t request_id) override {
    events.push_back({request_id ? "snapshot" : "image", ch.topic, ch.seq});
  }
  void send_stream_image(const cache::Channel& ch, SlowPolicy policy) override {
    events.push_back({"image", ch.topic, ch.seq, {}, {}, 0, policy});
  }
  void send_delivery(const Delivery& d) override {
    DecodedDelivery m;
    ASSERT_TRUE(decode_delivery(d, m));
    if (!d.image) {
      ASSERT_EQ(m.channel_id, d.channel.id);
    }
    events.push_back({d.image ? "image" : "update", d.channel.topic, m.seq, {}, {}, 0, d.policy});
    events.back().conflate_ms = d.conflate_ms;
    fanout_.mark_dirty(this);
  }
  void send_status(const cache::Channel& ch, wire::ChannelState state, wire::Code code, std::string_view,
                   bool) override {
    events.push_back({"status", ch.topic, ch.seq, state, code});
  }
  void send_request(uint32_t stream_id, std::string_view topic) override {
    events.push_back({"request", std::string(topic), 0, {}, {}, stream_id});
  }
  void send_release(uint32_t stream_id) override { events.push_back({"release", "", 0, {}, {}, stream_id}); }
  void send_channel_info(const wire::ChannelInfo& info) override {
    events.push_back({"info", std::string(info.topic), info.seq, info.state});
  }
  void complete_request(uint32_t request_id, const Outcome& outcome) override {
    events.push_back({"complete", "", request_id, {}, outcome.code});
  }
  void flush_output() override { ++flushes; }
  std::string_view name() const override { return name_; }
  // Names one provider connection across routers (a tiered broker's gateways); 0 = this outlet.
  uint64_t key = 0;
  uint64_t provider_key() const override { return key != 0 ? key : Outlet::provider_key(); }

  size_t count(const std::string& kind) const {
    size_t n = 0;
    for (const Event& e : events) n += e.kind == kind;
    return n;
  }
  const Event* last(const std::string& kind) const {
    for (auto it = events.rbegin(); it != events.rend(); ++it) {
      if (it->kind == kind) return &*it;
    }
    return nullptr;
  }

  std::vector<Event> events;
  int flushes = 0;

 private:
  output::Fanout& fanout_;
  std::string name_;
};

}  // namespace tw::broker
