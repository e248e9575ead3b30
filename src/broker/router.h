// Router: the broker logic of topic pub/sub with a last-value cache, free of
// sockets and encodings. It owns the channels (ChannelTable), every
// subscription pattern, and, per channel, the precomputed set of outlets that
// receive it, so publishing never walks a trie.
//
// Owned by one reactor thread. Guarantees, per outlet:
//   - a channel's IMAGE comes before its UPDATEs, and reflects exactly the
//     updates before it (same thread, same ordered output queue);
//   - overlapping patterns deliver each message once (one entry per outlet);
//   - per-channel order is publish order.
#pragma once
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "broker/fanout.h"
#include "broker/outlet.h"
#include "cache/channel_table.h"
#include "topic/index.h"
#include "topic/topic.h"
#include "wire/protocol.h"

namespace tw::broker {

struct RouterLimits {
  topic::Limits topic;
  size_t max_subscriptions = 10'000;  // patterns per outlet
  size_t max_channels = 1'000'000;
};

struct Outcome {
  wire::Code code = wire::Code::Ok;
  const char* detail = "";  // a static, user-facing explanation
  bool ok() const { return code == wire::Code::Ok; }
};

struct RouterStats {
  uint64_t publishes = 0;
  uint64_t deliveries = 0;
  uint64_t bad_payloads = 0;
};

class Router {
 public:
  Router(const RouterLimits& limits, Fanout& fanout);

  // Whether subscribe() would accept the pattern (valid, within the limit).
  Outcome check_subscribe(Outlet* outlet, std::string_view pattern) const;
  // Adds `pattern` for the outlet and sends it the image of every channel the
  // pattern newly covers. Subscribing to a pattern it already has is a no-op.
  Outcome subscribe(Outlet* outlet, std::string_view pattern);
  Outcome unsubscribe(Outlet* outlet, std::string_view pattern);
  // Drops every subscription of a closing outlet.
  void remove_outlet(Outlet* outlet);
  size_t subscription_count(Outlet* outlet) const;

  // Finds or creates the channel a publisher will publish to.
  Outcome advertise(std::string_view topic, wire::PayloadKind kind, cache::ChannelId& out);
  // Applies a message to the channel's cache and fans it out. The hot path.
  Outcome publish(cache::ChannelId id, std::span<const uint8_t> payload, bool image);
  // Sends the channel's current image as a snapshot reply (request_id != 0).
  Outcome snapshot(Outlet* outlet, std::string_view topic, uint32_t request_id);

  const RouterStats& stats() const { return stats_; }
  size_t channel_count() const { return channels_.size(); }
  cache::Channel* channel(cache::ChannelId id) { return channels_.get(id); }

 private:
  struct Entry {
    Outlet* outlet = nullptr;
    uint32_t refs = 0;            // how many of the outlet's patterns cover the channel
    uint64_t image_seq = 0;       // seq of the image it was sent; 0 = none yet
  };
  using Entries = std::vector<Entry>;

  Entries& entries(const cache::Channel& ch) { return subscribers_[ch.id - 1]; }
  void add_ref(cache::Channel& ch, Outlet* outlet);
  void drop_ref(cache::Channel& ch, Outlet* outlet);
  void send_pending_images(cache::Channel& ch);
  std::span<const uint8_t> encode_stream_frame(const cache::Channel& ch, std::span<const uint8_t> payload,
                                               bool image);

  RouterLimits limits_;
  Fanout& fanout_;
  cache::ChannelTable channels_;
  std::vector<Entries> subscribers_;  // by channel id - 1
  topic::PatternIndex<Outlet*> patterns_;
  std::unordered_map<Outlet*, std::vector<std::string>> patterns_by_outlet_;
  RouterStats stats_;
};

}  // namespace tw::broker
