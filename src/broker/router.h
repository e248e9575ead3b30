// Router: the broker logic of topic pub/sub with a last-value cache and
// interactive providers, free of sockets and encodings. It owns the channels
// (ChannelTable), every subscription pattern, the services and their
// providers, and, per channel, the precomputed set of outlets that receive
// it, so publishing never walks a trie.
//
// Owned by one reactor thread, which claims it (claim_owner) when its loop
// starts; debug builds abort when a public method runs on another thread
// (base/owner_thread.h). Guarantees, per outlet:
//   - a channel's IMAGE comes before its UPDATEs, and reflects exactly the
//     updates before it (same thread, same ordered output queue);
//   - overlapping patterns deliver each message once (one entry per outlet);
//   - per-channel order is publish order.
//
// Interactive channels (docs/ARCHITECTURE.md has the state diagram): an
// exact subscription to a topic of a service with providers opens the
// channel with a REQUEST to one provider; wildcards only observe channels
// that are open. When the last exact subscription leaves, the channel is
// released after a linger. A provider that is lost makes its channels STALE,
// and they are requested again from another provider.
#pragma once
#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/owner_thread.h"
#include "broker/fanout.h"
#include "broker/delay_line.h"
#include "broker/outlet.h"
#include "broker/stream_frames.h"
#include "broker/upstream.h"
#include "cache/directory.h"
#include "cache/channel_table.h"
#include "topic/index.h"
#include "topic/topic.h"
#include "wire/protocol.h"

namespace tw::broker {

class ProviderLoads;
enum class Balance { LeastLoaded, RoundRobin };

struct RouterLimits {
  topic::Limits topic;
  size_t max_subscriptions = 10'000;  // patterns per outlet
  size_t max_channels = 1'000'000;
  uint64_t request_timeout_ms = 5'000;  // a provider must answer a REQUEST within this
  uint64_t release_linger_ms = 5'000;   // keep an unwatched interactive channel this long
  uint64_t not_found_ttl_ms = 10'000;   // remember a NOT_FOUND answer this long
  // A channel with no publisher, provider or subscriber is freed this long
  // after it became so (docs/configuration.md, channel_linger_ms).
  uint64_t channel_linger_ms = 30'000;
  Balance balance = Balance::LeastLoaded;
  SlowPolicy default_policy = SlowPolicy::Conflate;  // for subscriptions that ask for Default
  // Delayed subscriptions (docs/ARCHITECTURE.md, "Delay"): past this many
  // bytes of recorded data new ones are refused; messages within one bucket merge.
  size_t delay_max_bytes = 256ull << 20;
  uint64_t delay_bucket_ms = 1'000;
};

struct RouterStats {
  uint64_t publishes = 0;
  uint64_t deliveries = 0;
  uint64_t bad_payloads = 0;
  uint64_t requests = 0;
  uint64_t releases = 0;
  uint64_t request_timeouts = 0;
  uint64_t failovers = 0;          // channels re-requested after their provider was lost
  uint64_t not_found_cached = 0;   // requests answered from the NOT_FOUND memory
  uint64_t stray_provider_messages = 0;  // for channels the provider was not asked for
  uint64_t channels_freed = 0;     // unused channels freed after channel_linger_ms (no value to keep)
  uint64_t channels_evicted = 0;   // unused channels freed with their last value, under max_channels pressure
  uint64_t delay_compactions = 0;  // delayed entries merged into the next to stay within delay_max_bytes
};

using Clock = std::function<uint64_t()>;  // nanoseconds, monotonic

// Why a field list was refused: INVALID_UTF8 for a STRING value's text, BAD_PAYLOAD otherwise.
inline Outcome payload_refusal(std::span<const uint8_t> payload) {
  if (fields::why_invalid(payload) == fields::Invalid::Utf8) {
    return {wire::Code::InvalidUtf8, "a STRING field value is not valid UTF-8"};
  }
  return {wire::Code::BadPayload, "malformed field list"};
}
// Where a paged LIST_CHANNELS stands (Router::list_channels_page).
struct ListingCursor {
  std::string service;  // "" = all
  uint32_t request_id = 0;
  cache::ChannelId next = 1;
  bool done = false;
  // Tiered: the gateway listed now, and whether its page is on its way.
  uint32_t shard = 0;
  bool waiting = false;
};

class Router {
 public:
  Router(const RouterLimits& limits, Fanout& fanout, Clock clock = nullptr);
  ~Router();

  // --- subscribers
  // Whether subscribe() would accept the pattern (valid, within the limit;
  // a delayed one also needs room under delay_max_bytes).
  Outcome check_subscribe(Outlet* outlet, std::string_view pattern, uint32_t delay_ms = 0) const;
  // Adds `pattern` for the outlet and sends it the image of every channel the
  // pattern newly covers; an exact pattern on an interactive service opens
  // the channel. Subscribing to a pattern it already has is a no-op (its
  // policy stays). `policy` Default means limits.default_policy. When several
  // patterns of one outlet cover a channel, the strictest policy applies
  // (disconnect > drop > conflate). `conflate_ms` > 0 asks for at most one
  // merged refresh per channel per interval (docs/ARCHITECTURE.md,
  // "Conflation"); a channel covered by several patterns of one outlet gets
  // the smallest interval, and real time (0) if any pattern is real time.
  // `delay_ms` > 0: the stream as it was that long ago ("Delay"), under its
  // own channel id (kDelayedChannelBit set), for each (channel, delay) pair.
  Outcome subscribe(Outlet* outlet, std::string_view pattern, SlowPolicy policy = SlowPolicy::Default,
                    uint32_t conflate_ms = 0, uint32_t delay_ms = 0);
  Outcome unsubscribe(Outlet* outlet, std::string_view pattern);
  // A subscription made again that asks for its retained messages again
  // (MQTT Retain Handling 0): the outlet's image of every channel with data
  // it holds through `pattern`, as Outlet::send_prior_image. Nothing is
  // unsubscribed, so no message is lost in between [MQTT-3.8.4-3].
  void resend_images(Outlet* outlet, std::string_view pattern);
  // The ACK of a subscription to `patterns` (each subscribed already). The
  // single-threaded router holds every subscription at once: OK. A mirror
  // answers pending while a gateway may not hold the interest yet; the
  // access point calls the connection's Session::settled when every one does.
  Outcome settle(Outlet* outlet, std::span<const std::string_view> patterns, uint32_t request_id);
  // Drops every subscription and every service of a closing outlet.
  void remove_outlet(Outlet* outlet);
  // The outlet's entitlements changed (router_entitle.cc): Outlet::entitled
  // answers under the new ones, `before` under the old. Channels it may no
  // longer receive are detached, each that it then no longer receives at all
  // with STATUS CLOSED NOT_AUTHORIZED; exact patterns no longer permitted are
  // dropped; channels newly permitted attach. Nothing else changes.
  using EntitledFn = std::function<bool(std::string_view topic, uint32_t delay_ms)>;
  void reentitle(Outlet* outlet, const EntitledFn& before);
  size_t subscription_count(Outlet* outlet) const;
  // The patterns an outlet holds, as it subscribed them (the policy
  // resolved), sorted by pattern: the admin API's subscriptions view.
  struct HeldSubscription {
    std::string pattern;
    SlowPolicy policy = SlowPolicy::Conflate;
    uint32_t conflate_ms = 0;
    uint32_t delay_ms = 0;
  };
  std::vector<HeldSubscription> subscriptions_of(const Outlet* outlet) const;
  // Whether the outlet currently receives the channel's stream (some pattern covers it).
  bool delivers(const Outlet* outlet, cache::ChannelId id) const;
  // The policy deliveries of the channel to the outlet carry; Default when it does not receive it.
  SlowPolicy policy_of(const Outlet* outlet, cache::ChannelId id) const;
  // The conflation interval deliveries of the channel to the outlet carry; 0 = real time (or not delivered).
  uint32_t conflate_ms_of(const Outlet* outlet, cache::ChannelId id) const;
  // Sends the channel's current image as a snapshot reply (request_id != 0).
  Outcome snapshot(Outlet* outlet, std::string_view topic, uint32_t request_id);

  // --- broadcast publishers
  // Finds or creates the channel a publisher will publish to. With `by`, its
  // outlet holds the channel until remove_outlet, and may create a new one only if by->may_create.
  Outcome advertise(std::string_view topic, wire::PayloadKind kind, cache::ChannelId& out, Advertiser* by = nullptr);
  // Applies a message to the channel's cache and fans it out. The hot path.
  // A gateway passes Checked::Already for what its access point validated.
  Outcome publish(cache::ChannelId id, std::span<const uint8_t> payload, bool image,
                  fields::Checked checked = fields::Checked::No, const MessageOrigin& origin = {});
  // The origin of the message being fanned out now (within publish or
  // mirror_message); empty otherwise. Outlets read it in send_delivery and
  // send_stream_image.
  const MessageOrigin& origin() const { return origin_; }

  // --- interactive providers
  Outcome provide(Outlet* outlet, std::string_view service, std::string_view pattern);
  Outcome withdraw(Outlet* outlet, std::string_view service);
  // A provider's message on a stream it was given. Messages for channels it
  // was not asked for are ignored and counted (stray), never applied.
  Outcome provider_publish(Outlet* outlet, cache::ChannelId id, std::span<const uint8_t> payload, bool image,
                           fields::Checked checked = fields::Checked::No);
  Outcome provider_status(Outlet* outlet, cache::ChannelId id, wire::ChannelState state, wire::Code code,
                          std::string_view text);

  // --- administration and time
  // Sends one ChannelInfo per channel of `service` ("" = all) to the outlet.
  // A pending Outcome when another thread answers (tiered broker).
  Outcome list_channels(Outlet* outlet, std::string_view service, uint32_t request_id);
  // The same, a page at a time, so that a large listing neither stalls the
  // loop nor outgrows the connection's output: sends the rows of the
  // channels from cursor.next on, looking at no more than `max_visits`
  // channel ids, and sets cursor.done after the last. With an upstream the
  // page is asked of the gateways, one after the other (pending, cursor.waiting
  // until listing_page_answered).
  Outcome list_channels_page(Outlet* outlet, ListingCursor& cursor, size_t max_visits);
  // Tiered: the gateway's page arrived (Outlet::listing_page); moves the cursor on.
  void listing_page_answered(ListingCursor& cursor, cache::ChannelId next, bool shard_done);
  // An administrator closes the channel (router_admin.cc, docs/operations.md):
  // its subscribers get STATUS CLOSED CLOSED_BY_ADMIN, exact subscriptions
  // end, a provider is released, the image goes. NotFound when there is no
  // such channel. The owner's router only (the single loop, or a gateway).
  Outcome close_by_admin(std::string_view topic);
  // Request timeouts, release lingers, NOT_FOUND expiry, rate samples.
  void on_tick();

  // --- thread tiers (docs/ARCHITECTURE.md, "Threads"; router_mirror.cc)
  // Gateway: channels get broker-wide ids from the shared directory.
  void attach_directory(cache::ChannelDirectory* directory) {
    owner_.check("Router");
    directory_ = directory;
  }
  // Gateway: least-loaded balancing counts each provider's streams in every
  // gateway (`loads` is shared by them all), not only in this one.
  void share_provider_loads(ProviderLoads* loads) {
    owner_.check("Router");
    provider_loads_ = loads;
  }
  // Access point: this router mirrors channels owned by gateways; what
  // changes a channel goes upstream, subscriptions and fan-out stay here.
  void attach_upstream(Upstream* upstream) {
    owner_.check("Router");
    upstream_ = upstream;
  }
  bool is_mirror() const {
    owner_.check("Router");
    return upstream_ != nullptr;
  }
  // A mirror's inputs, in the order the owning gateway sent them.
  void mirror_channel(cache::ChannelId id, std::string_view topic, wire::PayloadKind kind);
  void mirror_message(cache::ChannelId id, uint64_t seq, std::span<const uint8_t> payload,
                      std::span<const uint8_t> frame, bool image, bool prior = false,
                      const MessageOrigin& origin = {});
  void mirror_status(cache::ChannelId id, wire::ChannelState state, wire::Code code, std::string_view text);
  // Gateway: the outlet (an access point) stands for `count` subscribers of the channel, for listings.
  void set_weight(const Outlet* outlet, cache::ChannelId id, uint32_t count);
  // Gateway: the last publisher hold of the channel went (tier::Op::Unheld); it may be freed.
  void channel_unheld(cache::ChannelId id);
  // Gateway: called with each channel it frees, so the access points drop their copies.
  void on_channel_freed(std::function<void(cache::ChannelId)> fn) {
    owner_.check("Router");
    on_freed_ = std::move(fn);
  }
  // Mirror: the gateway freed the channel (tier::Op::Forget).
  void mirror_forget(cache::ChannelId id);

  // Loop-local: other threads read the loop's published snapshot (tier/loop_snapshot.h).
  const RouterStats& stats() const {
    owner_.check("Router");
    return stats_;
  }
  size_t channel_count() const {
    owner_.check("Router");
    return channels_.size();
  }
  // A delayed stream's id gives its delayed copy of the channel.
  cache::Channel* channel(cache::ChannelId id) {
    owner_.check("Router");
    return is_delayed_id(id) ? delayed_channel(id) : channels_.get(id);
  }
  // Delayed streams ((channel, delay) pairs recorded) and the bytes their recordings hold.
  size_t delayed_stream_count() const {
    owner_.check("Router");
    return delayed_.size();
  }
  size_t delayed_bytes() const {
    owner_.check("Router");
    return delay_budget_.used;
  }
  // Channels currently served by providers of `service`, per provider name.
  std::vector<std::pair<std::string, uint32_t>> provider_loads(std::string_view service) const;
  // The loop thread takes the router and its channel table when it starts.
  void claim_owner() {
    owner_.claim();
    channels_.claim_owner();
  }

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
  struct Provider;
  struct Service;
  struct DelayedStream;
  // Routing state of one channel, beside the cache::Channel it describes.
  struct Route {
    std::vector<Entry> subscribers;
    std::vector<DelayedStream*> delayed;  // its recordings for delayed subscribers, one per delay
    uint32_t exact_refs = 0;       // exact subscriptions: what keeps an interactive channel open
    bool interactive = false;
    Provider* provider = nullptr;  // the active provider, if any
    bool pending = false;          // REQUEST sent, no IMAGE yet
    uint64_t deadline_ns = 0;      // of the pending request
    uint64_t linger_until_ns = 0;  // release time once unwatched; 0 = not lingering
    std::vector<Outlet*> tried;    // providers that timed out on this request
    uint64_t rate_seq = 0;         // seq at the last one-second sample
    uint32_t rate = 0;             // updates in the last full second
    uint32_t publishers = 0;       // outlets that registered it (advertise with an Advertiser)
    uint64_t free_at_ns = 0;       // when it may be freed, unused; 0 = in use
    uint64_t kept_since_ns = 0;    // unused and kept for its last value since then; 0 = not kept
    bool transient = false;        // its last value came from an MQTT PUBLISH with RETAIN 0: not kept
  };

  Route& route(const cache::Channel& ch) { return routes_[ch.id - 1]; }
  // Who watches the channel, live and delayed (an access point's entry
  // stands for its own count): LIST_CHANNELS shows it, a mirror reports it.
  uint32_t subscriber_count(const Route& r) const;
  struct PatternRef;
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
  // prior: the image's state predates the subscriptions (Outlet::send_prior_image).
  void send_pending_images(cache::Channel& ch, bool prior = false);
  void fan_out(cache::Channel& ch, std::span<const uint8_t> payload, bool image);
  // fan_out with frames that may hold an encoding already (a mirror pins the gateway's).
  void fan_out(cache::Channel& ch, StreamFrames& frames, std::span<const uint8_t> payload, bool image);
  // The stream message to every entry of `list` that has not got it in its image.
  void deliver(std::vector<Entry>& list, const cache::Channel& ch, StreamFrames& frames,
               std::span<const uint8_t> payload, bool image);
  // Mirror mode (router_mirror.cc).
  void hold_interest(std::string_view pattern);
  void drop_interest(std::string_view pattern);
  void count_subscribers(const cache::Channel& ch);
  void end_streams(cache::Channel& ch, wire::Code code, std::string_view text);
  void fan_out_status(cache::Channel& ch, wire::ChannelState state, wire::Code code, std::string_view text);
  cache::Channel* create_channel(std::string_view topic, wire::PayloadKind kind);

  // interactive channels (router_providers.cc)
  Service* interactive_service(std::string_view topic);
  void open_interactive(cache::Channel& ch, Service& service, Outlet* requester);
  // Finds or creates the channel of an exact subscription and opens it; false at the channel limit.
  bool open_exact(Outlet* requester, std::string_view topic, Service& service);
  void open_waiting_subscriptions(Service& service);
  bool request(cache::Channel& ch, Service& service);
  Provider* choose_provider(Service& service, const cache::Channel& ch, const Route& r);
  Provider* next_shared_turn(Service& service, const std::function<bool(const Provider&)>& eligible);
  // A provider's open streams for balancing: over all gateways when shared.
  uint32_t load_of(const Provider& p) const;
  // Tells the shared loads what changed in p->channels since the last call.
  void note_load(Provider& p);
  void detach_provider(cache::Channel& ch, bool send_release);
  void close_channel(cache::Channel& ch, wire::Code code, std::string_view text);
  void lose_provider(Provider* provider);
  void expire_requests(uint64_t now);
  void release_lingering(uint64_t now);
  void sample_rates();
  bool owns(Outlet* outlet, const cache::Channel& ch) const;
  // Channel lifecycle (router_lifecycle.cc): a channel nobody publishes,
  // provides or subscribes to is freed after channel_linger_ms.
  bool unused(const cache::Channel& ch) const;
  void consider_freeing(cache::Channel& ch);
  void free_unused(uint64_t now);
  void free_channel(cache::Channel& ch);
  // Last values kept (router_lifecycle.cc): whether an unused channel is kept
  // rather than freed, and the eviction of the oldest kept ones under pressure.
  bool keeps_last_value(cache::Channel& ch);
  void keep(cache::Channel& ch, uint64_t now);
  size_t evict_kept(size_t count);
  void relieve_pressure();
  void hold_publisher(Outlet* outlet, cache::Channel& ch);
  void release_publisher(Outlet* outlet);

  RouterLimits limits_;
  Fanout& fanout_;
  Upstream* upstream_ = nullptr;
  MessageOrigin origin_;  // set during one publish's fan-out
  cache::ChannelDirectory* directory_ = nullptr;
  ProviderLoads* provider_loads_ = nullptr;  // tiered: shared by the gateways
  std::unordered_map<std::string, uint32_t> interest_;  // mirror: local subscriptions per pattern
  Clock clock_;
  cache::ChannelTable channels_;
  std::vector<Route> routes_;  // by channel id - 1
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
  void forget_pattern(Outlet* outlet, std::string_view pattern, const Held& held);
  topic::PatternIndex<PatternRef> patterns_;
  std::unordered_map<Outlet*, HeldPatterns> patterns_by_outlet_;
  std::unordered_map<std::string, std::unique_ptr<Service>> services_;
  std::unordered_map<std::string, uint64_t> not_found_until_;  // topic -> expiry
  std::unordered_set<cache::ChannelId> pending_;    // channels with a request in flight
  std::unordered_set<cache::ChannelId> lingering_;  // interactive channels nobody watches
  // Channels that became unused, in the order they did (the linger is one
  // constant, so their free times are nearly in order; one whose linger
  // restarted is freed late, never early): at most one entry per channel.
  std::deque<std::pair<uint64_t, cache::ChannelId>> unused_;
  // Unused channels kept for their last value, oldest first: (kept_since_ns,
  // id); an entry whose time is not its route's any more is stale (the
  // channel was used again, or freed) and skipped.
  std::deque<std::pair<uint64_t, cache::ChannelId>> kept_;
  size_t kept_count_ = 0;  // channels kept now (kept_ may hold stale entries too)
  std::function<void(cache::ChannelId)> on_freed_;
  std::unordered_map<Outlet*, std::unordered_set<cache::ChannelId>> published_by_;  // what each publisher holds
  uint64_t next_rate_sample_ns_ = 0;
  RouterStats stats_;

  // Delayed subscriptions (router_delay.cc; docs/ARCHITECTURE.md, "Delay").
  // One recording per (channel, delay): its subscribers and the channel as it was `delay` ago.
  struct DelayedStream {
    DelayedStream(const cache::Channel& live, uint32_t delay_ms, uint64_t bucket_ns, DelayBudget& budget);
    cache::ChannelId source = 0;  // the live channel
    uint32_t delay_ms = 0;
    cache::Channel copy;          // the delayed state, under the stream's own id
    size_t copy_bytes = 0;        // what the copy counts in the budget
    DelayLine line;
    std::vector<Entry> subscribers;
  };
  static bool is_delayed_id(cache::ChannelId id) { return (id & kDelayedChannelBit) != 0; }
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
  void add_delayed_ref(cache::Channel& ch, const PatternRef& ref);
  void drop_delayed_if_unwatched(cache::Channel& ch, uint32_t delay_ms);
  void record_delayed(cache::Channel& ch, std::span<const uint8_t> payload, bool image);
  void fan_out_delayed_status(cache::Channel& ch, wire::ChannelState state, wire::Code code, std::string_view text);
  // The live channel's data is gone (released or closed): so is what its recordings held.
  void reset_delayed(cache::Channel& ch);
  void add_delayed_exact(cache::Channel& ch, std::vector<Outlet*>& outlets) const;
  void deliver_due_delayed(uint64_t now);
  void deliver_entry(DelayedStream& d, const DelayLine::Entry& entry);
  void account_copy(DelayedStream& d);
  DelayBudget delay_budget_{limits_.delay_max_bytes};
  std::unordered_map<cache::ChannelId, std::unique_ptr<DelayedStream>> delayed_;  // by delayed channel id
  cache::ChannelId last_delayed_id_ = kDelayedChannelBit;
  std::vector<uint8_t> delay_scratch_;  // one entry's payload while it is applied
  [[no_unique_address]] OwnerThread owner_;
};

}  // namespace tw::broker
