#include "tier/gateway.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>

#include "base/log.h"
#include "native/encoder.h"
#include "tickwire/wire/codec.h"

namespace tw::tier {

namespace {
constexpr uint32_t kTickMs = 50;
constexpr size_t kRecordsPerTurn = 4096;  // per access point, so one busy link cannot starve the others
constexpr size_t kArenaBytes = 8u << 20;
constexpr size_t kControlFrameMax = 1024;  // a control frame's fixed part, with room to spare; strings add their size
constexpr size_t kStreamBatchBytes = 64u << 10;
// Channel ids one LIST_CHANNELS page looks at: the rows of a page are bounded,
// and so is the gateway's work for it.
constexpr size_t kListingPageIds = 4096;
}  // namespace

// The gateway's stand-in for one connection of an access point (token != 0:
// a provider, a snapshot or listing requester) or for the access point itself
// (token 0: the stream of every channel its connections subscribe to).
class RemoteOutlet final : public broker::Outlet, public broker::ProviderOutlet, public broker::RequesterOutlet {
 public:
  struct Shared {
    Pipe& pipe;
    Waker& waker;
    output::Fanout& fanout;
    std::vector<bool> introduced;  // channels the access point has been told about
    bool subscribing = false;       // within Op::Interest: stream images predate the subscription
    // The open Stream record: this turn's stream frames go into one record,
    // back to back, so the access point's queues reference them as one run.
    std::span<uint8_t> batch;
    size_t batch_used = 0;
    size_t access_point = 0;  // which one, in access point order
    const broker::MessageOrigin* origin = nullptr;  // the router's: the message being fanned out
    void close_batch() {
      if (batch.empty()) return;
      pipe.end_batch(Record{Op::Stream}, batch_used);
      batch = {};
      batch_used = 0;
    }
  };
  RemoteOutlet(Shared& shared, uint32_t token, std::string name) : s_(shared), token_(token), name_(std::move(name)) {}

  void send_image(const cache::Channel& ch, uint32_t request_id) override {
    Record r{Op::SnapshotImage};
    r.token = token_;
    r.arg = request_id;
    r.a = ch.topic;
    r.flags = static_cast<uint8_t>(ch.kind);
    r.bytes = encode_image(ch, request_id);
    push(r);
  }
  void send_stream_image(const cache::Channel& ch, broker::SlowPolicy) override {
    introduce(ch);
    const uint32_t request_id = s_.subscribing ? kPriorImage : 0;
    // A retained message set aside (cache::Channel::retained) goes to the
    // copy with the image, which is the last value, RETAIN 0.
    if (ch.retained.active) pass_retained(ch);
    pass_origin(ch, ch.retained.active);
    stream(encode_image(ch, request_id));
  }
  void send_delivery(const broker::Delivery& d) override {
    pass_origin(d.channel);
    stream(d.frames.get(native::NativeEncoder::instance()));
  }
  void send_status(const cache::Channel& ch, wire::ChannelState state, wire::Code code, std::string_view text,
                   bool) override {
    introduce(ch);
    stream(encode_control([&](std::span<uint8_t> out) {
      return wire::encode(out, wire::StatusMsg{ch.id, state, code, text});
    }, kControlFrameMax + text.size()));
  }
  void send_request(uint32_t stream_id, std::string_view topic) override {
    to_outlet(encode_control([&](std::span<uint8_t> out) { return wire::encode(out, wire::Request{stream_id, topic}); },
                             kControlFrameMax + topic.size()));
  }
  void send_release(uint32_t stream_id) override {
    to_outlet(encode_control([&](std::span<uint8_t> out) { return wire::encode(out, wire::ReleaseMsg{stream_id}); }));
  }
  void send_channel_info(const wire::ChannelInfo& info) override {
    // Sized by its strings: a long topic (max_topic_length goes to 65,535) must not lose its row.
    to_outlet(encode_control([&](std::span<uint8_t> out) { return wire::encode(out, info); },
                             kControlFrameMax + info.topic.size() + info.provider.size()));
  }
  void complete_request(uint32_t request_id, const broker::Outcome& outcome) override {
    Record r{Op::Done};
    r.token = token_;
    r.arg = request_id;
    r.code = outcome.code;
    r.a = outcome.detail;
    push(r);
  }
  void listing_page(uint32_t request_id, cache::ChannelId next, bool shard_done) override {
    Record r{Op::ListPage};
    r.token = token_;
    r.arg = request_id;
    r.id = next;
    r.flags = shard_done ? 1 : 0;
    push(r);
  }
  // The answer to Op::Settle, after the stream frames of every record before it.
  void settled(const Record& settle) {
    Record r{Op::Settled};
    r.token = settle.token;
    r.arg = settle.arg;
    r.id = settle.id;
    push(r);
  }
  void flush_output() override {
    s_.close_batch();
    s_.pipe.drain_spill();
    s_.waker.notify();
  }
  std::string_view name() const override { return name_; }
  // An access point's connection may be of any protocol: what it cannot do,
  // its access point never asks for.
  broker::ProviderOutlet* as_provider() override { return this; }
  broker::RequesterOutlet* as_requester() override { return this; }
  void rename(std::string_view name) { name_ = std::string(name); }
  // Tokens are per access point: the pair names one connection in every gateway.
  uint64_t provider_key() const override { return (uint64_t{s_.access_point} << 32) | token_; }

 private:
  // A message's origin (broker::MessageOrigin) goes before its frame, as a
  // record of its own: the publisher's token only to the access point it
  // came from, the retain and transient flags and the attribute block to all.
  // The attributes are the channel's: the message being fanned out is its
  // last value, and an image sent as a subscription arrives (the retained
  // value) carries the last value's. Most messages have none: two comparisons.
  void pass_origin(const cache::Channel& ch, bool transient = false) {
    const broker::MessageOrigin& o = *s_.origin;
    const uint32_t token = o.access_point == s_.access_point ? o.token : 0;
    transient = transient || o.transient;
    if (token == 0 && !o.retain && !transient && ch.attributes.empty()) return;
    Record r{Op::Origin};
    r.token = token;
    r.flags = (o.retain ? kFlagRetain : 0) | (transient ? kFlagTransient : 0);
    r.bytes = ch.attributes;
    push(r);
  }
  // The retained value set aside, for the copy to set it aside too.
  void pass_retained(const cache::Channel& ch) {
    Record r{Op::Origin};
    r.flags = kFlagRetainedAside;
    r.arg = static_cast<uint32_t>(ch.retained.attributes.size());
    r.prefix = ch.retained.attributes;  // written before the payload
    r.bytes = ch.retained.opaque;
    push(r);
  }
  void push(const Record& r) {
    s_.close_batch();  // records keep their order
    s_.pipe.push(r);
    s_.fanout.mark_dirty(this);
  }
  void stream(std::span<const uint8_t> frame) {
    if (s_.batch.size() - s_.batch_used < frame.size()) {
      s_.close_batch();
      s_.batch = s_.pipe.begin_batch(Record{Op::Stream}, std::max(kStreamBatchBytes, frame.size()));
      if (s_.batch.empty()) {  // ring full: this frame goes to the spill, in order
        Record r{Op::Stream};
        r.bytes = frame;
        return push(r);
      }
    }
    std::memcpy(s_.batch.data() + s_.batch_used, frame.data(), frame.size());
    s_.batch_used += frame.size();
    s_.fanout.mark_dirty(this);
  }
  void to_outlet(std::span<const uint8_t> frame) {
    Record r{Op::ToOutlet};
    r.token = token_;
    r.bytes = frame;
    push(r);
  }
  void introduce(const cache::Channel& ch) {
    if (ch.id < s_.introduced.size() && s_.introduced[ch.id]) return;
    if (ch.id >= s_.introduced.size()) s_.introduced.resize(ch.id + 1024);
    s_.introduced[ch.id] = true;
    stream(encode_control([&](std::span<uint8_t> out) {
      return wire::encode(out, wire::ChannelIntro{ch.id, ch.kind, ch.topic});
    }, kControlFrameMax + ch.topic.size()));
  }
  std::span<const uint8_t> encode_image(const cache::Channel& ch, uint32_t request_id) {
    const size_t payload = ch.image_size();
    auto out = s_.fanout.reserve(wire::kImageFixedSize + payload);
    const size_t n = ch.encode_image(out.subspan(wire::kImageFixedSize));
    wire::encode_image_prefix(out, ch.id, ch.seq, request_id, n);
    return s_.fanout.commit(wire::kImageFixedSize + n);
  }
  template <typename Encode>
  std::span<const uint8_t> encode_control(Encode&& encode, size_t max = kControlFrameMax) {
    auto out = s_.fanout.reserve(max);
    return s_.fanout.commit(encode(out));
  }

  Shared& s_;
  uint32_t token_;
  std::string name_;
};

// One access point as the gateway sees it: its link, its stream outlet and
// the stand-ins of its connections.
class Gateway::Port {
 public:
  Port(Link& link, Waker& waker, broker::Router& router, broker::OwnedChannels& channels, output::Fanout& fanout,
       size_t index)
      : link_(link),
        router_(router),
        channels_(channels),
        fanout_(fanout),
        shared_{link.to_access_point, waker, fanout, {}},
        stream_(shared_, 0, "access-point-" + std::to_string(index)) {
    shared_.access_point = index;
    shared_.origin = &router.origin();
  }

  // Handles up to kRecordsPerTurn records; true when it did any.
  bool drain() {
    SpscRing& ring = link_.to_gateway.ring();
    size_t n = 0;
    for (; n < kRecordsPerTurn; ++n) {
      auto bytes = ring.read();
      if (bytes.empty()) break;
      Record r;
      if (read_record(bytes, r)) handle(r);
    }
    if (n > 0) ring.release();
    return n > 0;
  }
  bool has_input() { return !link_.to_gateway.ring().empty(); }
  size_t backlog() const { return link_.to_access_point.spilled_bytes(); }
  // Moves spilled records into the ring as the access point frees it. Not
  // only when this turn produced output: a congested gateway produces none
  // until its spill drains.
  // The router freed the channel: an access point that was sent it drops its copy.
  void forget_channel(cache::ChannelId id) {
    if (id >= shared_.introduced.size() || !shared_.introduced[id]) return;
    shared_.close_batch();  // after this turn's stream frames, in order
    Record r{Op::Forget};
    r.id = id;
    link_.to_access_point.push(r);
    shared_.waker.notify();
  }
  void drain_backlog() {
    if (backlog() == 0) return;
    shared_.close_batch();
    link_.to_access_point.drain_spill();
    shared_.waker.notify();
  }

 private:
  RemoteOutlet& remote(uint32_t token, std::string_view name = {}) {
    auto& slot = remotes_[token];
    if (!slot) slot = std::make_unique<RemoteOutlet>(shared_, token, std::string(name));
    if (!name.empty()) slot->rename(name);
    return *slot;
  }
  void forget(uint32_t token) {
    auto it = remotes_.find(token);
    if (it == remotes_.end()) return;
    router_.remove_outlet(it->second.get());
    fanout_.forget(it->second.get());
    remotes_.erase(it);
  }
  void handle(const Record& r);

  Link& link_;
  broker::Router& router_;
  broker::OwnedChannels& channels_;  // the router's owner: publisher holds released elsewhere
  output::Fanout& fanout_;
  RemoteOutlet::Shared shared_;
  RemoteOutlet stream_;
  std::unordered_map<uint32_t, std::unique_ptr<RemoteOutlet>> remotes_;
};

void Gateway::Port::handle(const Record& r) {
  const bool image = (r.flags & kFlagImage) != 0;
  const auto checked = (r.flags & kFlagValidated) != 0 ? fields::Checked::Already : fields::Checked::No;
  switch (r.op) {
    case Op::Interest:
      shared_.subscribing = true;
      router_.subscribe(&stream_, r.a, broker::SlowPolicy::Conflate, 0);
      shared_.subscribing = false;
      count_one(link_.interests_applied);  // a publish any access point reads from now on meets it
      return;
    case Op::Uninterest: router_.unsubscribe(&stream_, r.a); return;
    case Op::Advertise: {
      cache::ChannelId id = 0;
      router_.advertise(r.a, static_cast<wire::PayloadKind>(r.flags), id);
      return;
    }
    case Op::Publish: {
      broker::MessageOrigin origin{nullptr, r.token, static_cast<uint32_t>(shared_.access_point),
                                   (r.flags & kFlagRetain) != 0, (r.flags & kFlagTransient) != 0};
      std::span<const uint8_t> payload = r.bytes;
      if ((r.flags & kFlagAttributes) != 0 && r.arg <= payload.size()) {
        origin.attributes = payload.first(r.arg);
        payload = payload.subspan(r.arg);
      }
      router_.publish(r.id, payload, image, checked, origin);
      return;
    }
    case Op::Provide: {
      std::string_view name{reinterpret_cast<const char*>(r.bytes.data()), r.bytes.size()};
      router_.provide(&remote(r.token, name), r.a, r.b);
      return;
    }
    case Op::Withdraw: router_.withdraw(&remote(r.token), r.a); return;
    case Op::ProviderPublish: router_.provider_publish(&remote(r.token), r.id, r.bytes, image, checked); return;
    case Op::ProviderStatus:
      if (r.flags & kFlagPublisherStatus) {
        router_.publisher_status(&remote(r.token), r.id, r.state, r.code, r.a);
      } else {
        router_.provider_status(&remote(r.token), r.id, r.state, r.code, r.a);
      }
      return;
    case Op::Snapshot: {
      RemoteOutlet& requester = remote(r.token);
      requester.complete_request(r.arg, router_.snapshot(&requester, r.a, r.arg));
      return;
    }
    case Op::ListChannels: {
      RemoteOutlet& requester = remote(r.token);
      broker::ListingCursor cursor{std::string(r.a), r.arg, std::max<cache::ChannelId>(r.id, 1)};
      router_.list_channels_page(&requester, cursor, kListingPageIds);
      requester.listing_page(r.arg, cursor.next, cursor.done);
      return;
    }
    case Op::OutletGone: forget(r.token); return;
    case Op::SubscriberCount: router_.set_weight(&stream_, r.id, r.arg); return;
    case Op::Unheld: channels_.channel_unheld(r.id); return;
    case Op::Settle: stream_.settled(r); return;
    default: TW_WARN("gateway: unexpected link record %u", static_cast<unsigned>(r.op)); return;
  }
}

namespace {
broker::RouterLimits gateway_limits(broker::RouterLimits limits) {
  // Subscriptions arrive per access point, already checked against the per-connection limit.
  limits.max_subscriptions = ~size_t{0};
  // Delayed streams are recorded where their subscribers are: on the access points.
  limits.delay_history.clear();
  return limits;
}
}  // namespace

Gateway::Gateway(const config::BrokerConfig& config, broker::RouterLimits limits, cache::ChannelDirectory& directory,
                 size_t congested_backlog)
    : fanout_(std::max<size_t>(kArenaBytes, 2ull * config.limits.max_frame + 4096)),
      channels_(gateway_limits(limits)),
      router_(fanout_, channels_),
      congested_backlog_(congested_backlog) {
  channels_.name_by(directory);
}

Gateway::~Gateway() = default;

void Gateway::connect(std::vector<Link*> links, std::vector<Waker*> wakers) {
  for (size_t i = 0; i < links.size(); ++i) {
    ports_.push_back(std::make_unique<Port>(*links[i], *wakers[i], router_, channels_, fanout_, i));
  }
  channels_.on_channel_freed([this](cache::ChannelId id) {
    for (auto& port : ports_) port->forget_channel(id);
  });
}

bool Gateway::drain_inbound() {
  bool any = false;
  for (auto& port : ports_) any |= port->drain();
  return any;
}

bool Gateway::has_ring_input() const {
  for (const auto& port : ports_) {
    if (port->has_input()) return true;
  }
  return false;
}

size_t Gateway::largest_backlog() const {
  size_t most = 0;
  for (const auto& port : ports_) most = std::max(most, port->backlog());
  return most;
}

void Gateway::end_of_turn() {
  fanout_.flush_all();
  for (auto& port : ports_) port->drain_backlog();
}

void Gateway::tick() {
  inbox_.run_pending();  // the admin side's questions and actions (src/admin)
  router_.on_tick();
  end_of_turn();
  publish_snapshot();
}

void Gateway::publish_snapshot() { published_.publish({{}, reactor_.stats(), router_.stats(), router_.channel_count()}); }

void Gateway::run(const std::atomic<bool>& stop) {
  reactor_.claim_owner();
  fanout_.claim_owner();
  router_.claim_owner();
  reactor_.set_end_of_turn([this] { end_of_turn(); });
  reactor_.set_tick(kTickMs, [this](uint64_t) { tick(); });
  while (!stop.load(std::memory_order_relaxed)) {
    // An access point that does not keep up holds back input from all of
    // them: the gateway stops reading its rings, they fill, and the access
    // points stop reading their sockets (TCP pushes back on the publishers).
    const bool busy = largest_backlog() <= congested_backlog_ && drain_inbound();
    end_of_turn();
    // Spilled records wait for ring space, which the access point frees
    // without telling: look again soon rather than sleep.
    int wait = busy ? 0 : largest_backlog() > 0 ? 1 : -1;
    if (wait != 0 && !waker_.may_sleep([this] { return has_ring_input(); })) wait = 0;
    reactor_.run_once(wait);
    waker_.awake();
  }
  publish_snapshot();  // the final numbers, for the shutdown summary
}

}  // namespace tw::tier
