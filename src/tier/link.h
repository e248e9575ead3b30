// Link: how an access point and a gateway talk (docs/ARCHITECTURE.md,
// "Threads"). Two SpscRings, one per direction, carry Records; a record that
// finds its ring full goes to the producer's spill buffer and keeps its
// order (spill is the only allocation, and only under overload). A thread
// that sleeps says so in its Waker; a producer wakes it at most once per turn.
#pragma once
#include <atomic>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "reactor/reactor.h"
#include "tier/spsc_ring.h"
#include "tickwire/wire/protocol.h"

namespace tw::tier {

enum class Op : uint8_t {
  // access point -> gateway
  Interest = 1,      // a = pattern (first local subscription)
  Uninterest,        // a = pattern (last local subscription gone)
  Advertise,         // id, a = topic, flags = kind
  Publish,           // id, token = publisher (0: none given), flags = image | validated | retain | attributes,
                     // bytes = payload; with kFlagAttributes: arg = their size, bytes = attributes + payload
  Provide,           // token, a = service, b = pattern, bytes = connection name
  Withdraw,          // token, a = service
  ProviderPublish,   // token, id, flags = image, bytes = payload
  ProviderStatus,    // token, id, state, code, a = text; flags = kFlagPublisherStatus: a publisher's (STALE/OK)
  Snapshot,          // token, arg = request id, a = topic
  ListChannels,      // token, arg = request id, id = first channel id, a = service: one page
  OutletGone,        // token
  SubscriberCount,   // id, arg = local subscribers
  Unheld,            // id: the last publisher that registered the channel here is gone
  Settle,            // token, arg = request id, id = Interest records sent so far: answer Settled
  // gateway -> access point
  Stream,            // bytes = CHANNEL / IMAGE / UPDATE / STATUS frame of the access point's subscriptions
  ToOutlet,          // token, bytes = a frame for that connection as is (REQUEST, RELEASE, CHANNEL_INFO)
  SnapshotImage,     // token, arg = request id, a = topic, flags = kind, bytes = IMAGE frame
  Done,              // token, arg = request id, code, a = detail: this gateway's answer is complete
  Forget,            // id: the gateway freed the channel; the mirror drops its copy
  ListPage,          // token, arg = request id, id = next channel id, flags = 1 when this gateway has no more
  Origin,            // token = publisher on this access point (0: another), flags = retain, bytes = the
                     // message's attribute block: of the next IMAGE or UPDATE frame in the Stream records
                     // (broker::MessageOrigin; only for messages that have one)
  Settled,           // token, arg, id as the Settle: every record before it has been applied
};

struct Record {
  Op op{};
  uint8_t flags = 0;
  wire::ChannelState state = wire::ChannelState::Ok;
  wire::Code code = wire::Code::Ok;
  uint32_t token = 0;
  uint32_t id = 0;
  uint32_t arg = 0;
  std::string_view a, b;  // NUL-terminated in the ring, so detail texts can be passed on as C strings
  std::span<const uint8_t> bytes;
  // Written just before `bytes`, so that two parts need no copy into one;
  // the reader sees them joined, in `bytes`.
  std::span<const uint8_t> prefix;
};

// Record::flags of Publish and ProviderPublish records.
inline constexpr uint8_t kFlagImage = 1;      // the payload replaces the image
inline constexpr uint8_t kFlagValidated = 2;  // the access point validated its field list
inline constexpr uint8_t kFlagRetain = 4;     // Publish, Origin: MessageOrigin::retain
// Publish: the bytes start with the message's attribute block
// (cache::Channel::attributes), `arg` bytes of it.
inline constexpr uint8_t kFlagAttributes = 8;
inline constexpr uint8_t kFlagTransient = 16;  // Publish, Origin: MessageOrigin::transient
// Origin: the channel's retained value set aside (cache::Channel::retained),
// for the image that follows (after its own Origin record): arg = the size of
// its attributes, bytes = its attributes + its payload.
inline constexpr uint8_t kFlagRetainedAside = 32;
// ProviderStatus: a publisher's STALE/OK of a broadcast channel it registered (Router::publisher_status).
inline constexpr uint8_t kFlagPublisherStatus = 64;

// request_id of a stream IMAGE a gateway sends while a subscription reaches
// it (Op::Interest): the channel's state predates the subscription (MQTT:
// retained). Only on the link: the access point never passes the frame on.
inline constexpr uint32_t kPriorImage = ~uint32_t{0};

inline constexpr size_t kRecordHeader = 24;
size_t record_size(const Record& r);
void write_record(std::span<uint8_t> out, const Record& r);
// The header and strings of `r`, for a record whose bytes (bytes_size of
// them) the caller has already placed right after them.
size_t record_head_size(const Record& r);
void write_record_head(std::span<uint8_t> out, const Record& r, size_t bytes_size);
bool read_record(std::span<const uint8_t> in, Record& out);

// A thread's "I am about to sleep" flag, and how to wake it.
class Waker {
 public:
  explicit Waker(reactor::Reactor& reactor) : reactor_(reactor) {}
  // Consumer: call before a blocking wait, then re-check the rings
  // (Dekker-style with notify's fence: a record is either seen or woken for).
  void about_to_sleep() {
    sleeping_.store(true, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  void awake() { sleeping_.store(false, std::memory_order_relaxed); }
  // Consumer: the sleep protocol in one call. Announces the sleep, then asks
  // `has_input` once more (a record committed before the announcement was not
  // woken for). True: sleep, the producers will wake this loop. False: input
  // is waiting, the announcement is withdrawn. Either way call awake() after
  // the wait.
  template <typename HasInput>
  bool may_sleep(HasInput has_input) {
    about_to_sleep();
    if (!has_input()) return true;
    awake();
    return false;
  }
  // Wakes it whether it sleeps or not (stop requests; async-signal-safe).
  void notify_always() { reactor_.wake(); }
  // Producer: after committing records.
  void notify() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleeping_.load(std::memory_order_relaxed) && sleeping_.exchange(false)) reactor_.wake();
  }

 private:
  reactor::Reactor& reactor_;
  std::atomic<bool> sleeping_{false};
};

// One direction of a link.
class Pipe {
 public:
  explicit Pipe(size_t ring_bytes) : ring_(ring_bytes) {}
  // Producer side.
  void push(const Record& r);
  // A record of kind `r` whose bytes are written in place, up to `max_bytes`
  // of them (several frames, back to back): empty when the ring has no room
  // or records are spilled (then push() each part instead).
  std::span<uint8_t> begin_batch(const Record& r, size_t max_bytes);
  // Publishes the batch begun last, holding `bytes` bytes.
  void end_batch(const Record& r, size_t bytes);
  // Moves spilled records into the ring while they fit; true when none remain.
  bool drain_spill();
  size_t spilled_bytes() const { return spill_.size() - spill_read_; }
  // Consumer side.
  SpscRing& ring() { return ring_; }

 private:
  void spill(const Record& r);
  SpscRing ring_;
  std::vector<uint8_t> spill_;  // [u32 size][record] ...
  size_t spill_read_ = 0;
};

// The two pipes between one gateway and one access point, and how far the
// gateway has come with the access point's subscriptions: Interest records
// sent (written by the access point) and applied (by the gateway), which the
// other access points read for their PublishFence (interest_fence.h).
struct Link {
  explicit Link(size_t ring_bytes) : to_gateway(ring_bytes), to_access_point(ring_bytes) {}
  Pipe to_gateway;
  Pipe to_access_point;
  alignas(64) std::atomic<uint64_t> interests_sent{0};
  alignas(64) std::atomic<uint64_t> interests_applied{0};
};

// A single writer's count, one more (no read-modify-write needed).
inline void count_one(std::atomic<uint64_t>& counter) {
  counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

}  // namespace tw::tier
