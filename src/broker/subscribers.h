// Subscribers: a router's subscriber side (docs/ARCHITECTURE.md, "The
// router's roles"). It holds every subscription pattern of the loop's
// outlets and, per channel, the precomputed entries of the outlets that
// receive it, so a fan-out never walks a trie; it sends images before
// updates, delivers under each subscriber's policy and conflation interval,
// records delayed streams (subscribers_delay.cc) and re-checks entitlements
// (subscribers_entitle.cc).
//
// It delivers the channels of one table, its owner's (broker/channel_owner.h):
// the channels themselves on a single loop or a gateway, copies on an access
// point. The owner hands it channel events (created, fan_out, status,
// end_streams, ...); it tells the owner about interest through Interest.
// Guarantees, per outlet:
//   - a channel's IMAGE comes before its UPDATEs, and reflects exactly the
//     updates before it (same thread, same ordered output queue);
//   - overlapping patterns deliver each message once (one entry per outlet);
//   - per-channel order is publish order.
#pragma once
#include <array>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "broker/channel_owner.h"
#include "broker/delay_line.h"
#include "output/fanout.h"
#include "broker/outlet.h"
#include "broker/router_limits.h"
#include "output/stream_frames.h"
#include "cache/channel_table.h"
#include "topic/index.h"
#include "topic/topic.h"

namespace tw::broker {

// One pattern an outlet holds, as it subscribed it (the policy resolved).
struct HeldSubscription {
  std::string pattern;
  SlowPolicy policy = SlowPolicy::Conflate;
  uint32_t conflate_ms = 0;
  uint32_t delay_ms = 0;
};

class Subscribers {
 public:
  Subscribers(const RouterLimits& limits, output::Fanout& fanout, const Clock& clock, cache::ChannelTable& channels,
              Interest& owner, RouterStats& stats);
  ~Subscribers();
  Subscribers(const Subscribers&) = delete;
  Subscribers& operator=(const Subscribers&) = delete;

  // --- subscriptions (as Router's, which documents them)
  Outcome check_subscribe(Outlet* outlet, std::string_view pattern, uint32_t delay_ms) const;
  Outcome subscribe(Outlet* outlet, std::string_view pattern, SlowPolicy policy, uint32_t conflate_ms,
                    uint32_t delay_ms);
  Outcome unsubscribe(Outlet* outlet, std::string_view pattern);
  void resend_images(Outlet* outlet, std::string_view pattern);
  void remove_outlet(Outlet* outlet);
  using EntitledFn = std::function<bool(std::string_view topic, uint32_t delay_ms)>;
  void reentitle(Outlet* outlet, const EntitledFn& before);
  size_t subscription_count(Outlet* outlet) const;
  // The outlet's patterns, sorted by pattern.
  std::vector<HeldSubscription> subscriptions_of(const Outlet* outlet) const;
  SlowPolicy policy_of(const Outlet* outlet, cache::ChannelId id) const;
  uint32_t conflate_ms_of(const Outlet* outlet, cache::ChannelId id) const;
  // The outlet (an access point) stands for `count` subscribers of the channel.
  void set_weight(const Outlet* outlet, cache::ChannelId id, uint32_t count);
  // A live channel of the table, or a delayed stream's copy.
  cache::Channel* channel(cache::ChannelId id);
  // The exact topics subscribed under a service's first level, one outlet each.
  void for_each_exact_under(std::string_view service, const std::function<void(std::string_view, Outlet*)>& fn) const;

  // --- what the owner asks about a channel
  // Whether any subscription covers it, live or delayed.
  bool watched(const cache::Channel& ch) const;
  // Exact subscriptions covering it: what keeps an interactive channel open.
  uint32_t exact_refs(const cache::Channel& ch) const { return watch(ch).exact_refs; }
  // Who watches it, live and delayed (an access point's entry stands for its own count).
  uint32_t subscriber_count(const cache::Channel& ch) const;

  // --- channel events from the owner
  // A channel came into the table: the patterns that cover it attach.
  void created(cache::Channel& ch);
  // Asks the owner for the channels under limits.delay_history, which are
  // recorded from their creation on (once, when the router is assembled).
  void keep_delay_history();
  // The channel left the table (its subscriptions had gone).
  void freed(cache::ChannelId id);
  // A message applied to the channel: recorded for delayed streams, then to
  // every subscriber (an image first to those that have none). `frames` may
  // hold an encoding already (a mirror pins the gateway's).
  void fan_out(cache::Channel& ch, std::span<const uint8_t> payload, bool image, const MessageOrigin& origin = {});
  void fan_out(cache::Channel& ch, output::StreamFrames& frames, std::span<const uint8_t> payload, bool image,
               const MessageOrigin& origin);
  // A message from a remote owner, applied to the channel's copy: as
  // fan_out, sending on the owner's encoding `frame` (the native protocol's)
  // by reference; prior: as send_pending_images(prior), then the fan-out.
  void relay(cache::Channel& ch, std::span<const uint8_t> payload, std::span<const uint8_t> frame, bool image,
             bool prior, const MessageOrigin& origin);
  // The images of subscribers that have none yet; prior: as Outlet::send_prior_image.
  void send_pending_images(cache::Channel& ch, bool prior);
  void status(cache::Channel& ch, wire::ChannelState state, wire::Code code, std::string_view text);
  // The channel's stream is over: subscribers get CLOSED, exact subscriptions
  // to it end, the data goes. Wildcard subscribers stay attached and see the
  // channel again if it opens later.
  void end_streams(cache::Channel& ch, wire::Code code, std::string_view text);
  // The channel's data went (released): every subscriber gets an image when it comes back.
  void forget_images(cache::Channel& ch);
  // The live channel's data is gone (released or closed): so is what its recordings held.
  void reset_delayed(cache::Channel& ch);
  // Delayed entries that are due go out.
  void on_tick(uint64_t now);

  // The origin of the message being fanned out now; empty otherwise (Router::origin).
  const MessageOrigin& origin() const { return origin_; }
  size_t delayed_stream_count() const { return delayed_.size(); }
  size_t delayed_bytes() const { return delay_budget_.used; }

 private:
  struct Entry {
    Outlet* outlet = nullptr;
    uint32_t refs = 0;            // how many of the outlet's patterns cover the channel
    uint32_t exact = 0;           // of which exact (non-wildcard) patterns
    uint64_t image_seq = 0;       // seq of the image it was sent; 0 = none yet
    uint32_t weight = 1;          // subscribers it stands for (an access point: its own count)
    std::array<uint32_t, 3> policy_refs{};  // refs per policy: conflate, drop, disconnect
    uint32_t realtime_refs = 0;   // refs of patterns without a conflation interval
    uint32_t min_conflate_ms = 0; // smallest interval among the conflated patterns; 0 = none
    bool has_image() const { return image_seq != 0; }
    SlowPolicy policy() const;    // the strictest policy with a ref
    // Real time wins: any real-time pattern makes the whole channel real time.
    uint32_t conflate_ms() const { return realtime_refs > 0 ? 0 : min_conflate_ms; }
  };
  struct DelayedStream;
  // Who receives one channel, beside the cache::Channel it describes.
  struct Watch {
    std::vector<Entry> subscribers;
    std::vector<DelayedStream*> delayed;  // its recordings for delayed subscribers, one per delay
    uint32_t exact_refs = 0;
  };
  // A subscription as the pattern trie stores it.
  struct PatternRef {
    Outlet* outlet = nullptr;
    bool exact = false;
    SlowPolicy policy = SlowPolicy::Conflate;
    uint32_t conflate_ms = 0;
    uint32_t delay_ms = 0;
    bool operator==(const PatternRef&) const = default;
  };
  // One pattern an outlet holds (the key), with the (resolved) policy and interval it was subscribed with.
  struct Held {
    SlowPolicy policy = SlowPolicy::Conflate;
    uint32_t conflate_ms = 0;
    uint32_t delay_ms = 0;
  };
  // Hashed by pattern, so that an outlet's subscribe and unsubscribe cost the
  // same at 200,000 patterns as at 10 (a list searched per call was quadratic).
  using HeldPatterns = std::unordered_map<std::string, Held, topic::detail::LevelHash, std::equal_to<>>;
  PatternRef held_ref(Outlet* outlet, std::string_view pattern, const Held& held) const {
    return {outlet, !topic::is_wildcard(pattern), held.policy, held.conflate_ms, held.delay_ms};
  }

  Watch& watch(const cache::Channel& ch) { return watches_[ch.id - 1]; }
  const Watch& watch(const cache::Channel& ch) const { return watches_[ch.id - 1]; }
  void forget_pattern(Outlet* outlet, std::string_view pattern, const Held& held);
  // A wildcard's ref counts on a channel only while its outlet is entitled to it.
  void add_ref(cache::Channel& ch, const PatternRef& ref);
  void drop_ref(cache::Channel& ch, const PatternRef& ref);
  void add_counted_ref(cache::Channel& ch, const PatternRef& ref);
  void drop_counted_ref(cache::Channel& ch, const PatternRef& ref);
  // Revocation: detaches the ref, closing the outlet's stream when it was the last that covered it.
  void revoke_ref(cache::Channel& ch, const PatternRef& ref);
  // Counts the pattern in the outlet's entry of `list` (a live or a delayed
  // subscriber list); a new entry starts its stream from `shown` (the live
  // channel or its delayed copy): the image, then STALE if it is. True when new.
  bool attach(std::vector<Entry>& list, const cache::Channel& shown, const PatternRef& ref);
  // The smallest interval among the outlet's (remaining) conflated patterns that cover the channel.
  uint32_t min_conflate_ms(const Outlet* outlet, std::string_view topic, uint32_t delay_ms = 0) const;
  // The stream message to every entry of `list` that has not got it in its image.
  void deliver(std::vector<Entry>& list, const cache::Channel& ch, output::StreamFrames& frames,
               std::span<const uint8_t> payload, bool image);

  // Delayed subscriptions (subscribers_delay.cc; docs/ARCHITECTURE.md, "Delay").
  // One recording per (channel, delay): its subscribers and the channel as it was `delay` ago.
  struct DelayedStream {
    DelayedStream(const cache::Channel& live, uint32_t delay_ms, uint64_t bucket_ns, DelayBudget& budget);
    cache::ChannelId source = 0;  // the live channel
    uint32_t delay_ms = 0;
    cache::Channel copy;          // the delayed state, under the stream's own id
    size_t copy_bytes = 0;        // what the copy counts in the budget
    DelayLine line;
    uint64_t started_ns = 0;      // when the line began recording: the stream starts delay_ms after
    std::vector<Entry> subscribers;
    bool history = false;         // a [[delay_history]] recording: kept without subscribers, counts as one
  };
  static bool is_delayed_id(cache::ChannelId id) { return (id & kDelayedChannelBit) != 0; }
  // The outlet's entry for the channel (live or delayed id), null if none.
  const Entry* entry_of(const Outlet* outlet, cache::ChannelId id) const;
  cache::Channel* delayed_channel(cache::ChannelId id);
  const Entry* delayed_entry(const Outlet* outlet, cache::ChannelId id) const;
  // The outlet's entry in a channel's subscriber list (one at most), null if
  // none; a mutable entry from a mutable list.
  template <typename List>
  static auto find_entry(List& list, const Outlet* outlet) -> decltype(&list.front()) {
    for (auto& e : list) {
      if (e.outlet == outlet) return &e;
    }
    return nullptr;
  }
  Outcome check_delay(uint32_t delay_ms) const;
  DelayedStream& delayed_stream(cache::Channel& ch, uint32_t delay_ms);
  std::vector<Entry>& delayed_subscribers(cache::Channel& ch, uint32_t delay_ms);
  bool add_delayed_ref(cache::Channel& ch, const PatternRef& ref);  // true: a new subscriber
  // A new subscriber of a stream with nothing to show yet learns when it starts (STATUS OK DELAY_HISTORY).
  void tell_history_starts(const DelayedStream& d, const cache::Channel& live, Outlet& outlet);
  void drop_delayed_if_unwatched(cache::Channel& ch, uint32_t delay_ms);
  void record_history(cache::Channel& ch);
  void record_delayed(cache::Channel& ch, std::span<const uint8_t> payload, bool image);
  void delayed_status(cache::Channel& ch, wire::ChannelState state, wire::Code code, std::string_view text);
  void add_delayed_exact(cache::Channel& ch, std::vector<Outlet*>& outlets) const;
  void deliver_due_delayed(uint64_t now);
  void deliver_entry(DelayedStream& d, const DelayLine::Entry& entry);
  void account_copy(DelayedStream& d);

  const RouterLimits& limits_;
  output::Fanout& fanout_;
  const Clock& clock_;
  cache::ChannelTable& channels_;
  Interest& owner_;
  RouterStats& stats_;
  MessageOrigin origin_;      // set during one fan-out
  std::vector<Watch> watches_;  // by channel id - 1
  topic::PatternIndex<PatternRef> patterns_;
  std::unordered_map<Outlet*, HeldPatterns> patterns_by_outlet_;
  DelayBudget delay_budget_;
  std::unordered_map<cache::ChannelId, std::unique_ptr<DelayedStream>> delayed_;  // by delayed channel id
  cache::ChannelId last_delayed_id_ = kDelayedChannelBit;
  std::vector<uint8_t> delay_scratch_;  // one entry's payload while it is applied
};

}  // namespace tw::broker
