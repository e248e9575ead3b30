// DelayLine: the recording of one channel for its subscribers with one delay
// (docs/ARCHITECTURE.md, "Delay"). Every message applied to the live channel
// is appended, due `delay` later; messages that arrive within one bucket of
// the newest pending entry are merged into it (field by field, no value lost;
// an image replaces what the entry held) and push its due time to now +
// delay, so nothing is ever due earlier than its delay and a channel holds at
// most delay / bucket + 1 entries, each at most one merged image, whatever
// its rate. The bytes held are counted in a DelayBudget shared by all lines
// of a router, which is how the broker bounds the memory of delayed data.
//
// Owned by one router thread; no locking. Time is passed in (nanoseconds).
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "cache/channel.h"
#include "tickwire/fields/field_list.h"
#include "tickwire/wire/protocol.h"

namespace tw::broker {

// Channel ids with this bit are delayed streams: a (channel, delay) pair has
// its own id, so a connection can hold the same topic live and delayed, and
// whatever refreshes a stream (slow consumers, conflation) finds the delayed
// copy, never the live state. Live ids stay below it (max_channels is smaller),
// and it is not kStreamIdBit (0x8000'0000), which names provider streams.
inline constexpr cache::ChannelId kDelayedChannelBit = 0x4000'0000u;

// Bytes held by every delay line of a router, against the configured bound.
struct DelayBudget {
  size_t max_bytes = 0;
  size_t used = 0;
  // Past the bound new delayed subscriptions are refused, and the lines that
  // record compact their oldest entries (DelayLine::compact_oldest) to get back under it.
  bool exhausted() const { return used > max_bytes; }
};

class DelayLine {
 public:
  struct Entry {
    uint64_t opened_ns = 0;  // when its first message arrived: the bucket starts here
    uint64_t due_ns = 0;     // when its last message has been delayed long enough
    uint64_t seq = 0;        // the live channel's seq after its last message
    uint32_t messages = 0;   // how many messages it merges
    bool image = false;      // it replaces the whole state (it holds an image)
    fields::FieldImage fields;   // FieldList channels: the merged fields
    std::vector<uint8_t> opaque; // Opaque channels: the last message
    size_t bytes = 0;            // what it counts in the budget
  };

  DelayLine(wire::PayloadKind kind, uint64_t delay_ns, uint64_t bucket_ns, DelayBudget& budget);
  ~DelayLine();
  DelayLine(const DelayLine&) = delete;
  DelayLine& operator=(const DelayLine&) = delete;

  // Starts from the live channel's current state: one image entry due now + delay
  // (nothing when the channel has no data yet).
  void start(const cache::Channel& live, uint64_t now_ns);
  // A message just applied to the live channel, whose seq is now `seq`.
  // False (and nothing recorded) if the field list is malformed.
  bool record(std::span<const uint8_t> payload, bool image, uint64_t seq, uint64_t now_ns);
  // The oldest entry if it is due at now_ns, else nullptr. pop() removes it.
  const Entry* due(uint64_t now_ns) const;
  void pop();
  // Forgets every pending entry (the live channel was released or closed).
  void clear();
  // Merges the oldest entry into the next one (no field value lost; the
  // merged entry is due when the next one was, so nothing goes out early; it
  // goes out as one refresh IMAGE, as a bucket that merged several messages
  // does). Frees what the two held beyond their union. False with under two entries.
  bool compact_oldest();

  // The entry as a payload for IMAGE/UPDATE; returns its size, 0 if it does not fit.
  size_t encode(const Entry& entry, std::span<uint8_t> out) const;
  size_t payload_size(const Entry& entry) const;
  // What an entry holding this state counts: the node, the field slots and
  // the encoded bytes (which stand for the string contents).
  static size_t held_bytes(const fields::FieldImage& image, size_t payload_size);

  size_t size() const { return entries_.size(); }
  size_t bytes() const { return bytes_; }
  uint64_t delay_ns() const { return delay_ns_; }
  wire::PayloadKind kind() const { return kind_; }
  const std::deque<Entry>& entries() const { return entries_; }

 private:
  Entry& open_entry(uint64_t now_ns);
  // Recounts one entry's bytes after it changed.
  void account(Entry& entry);

  wire::PayloadKind kind_;
  uint64_t delay_ns_;
  uint64_t bucket_ns_;
  DelayBudget& budget_;
  std::deque<Entry> entries_;  // oldest first; due times never decrease
  size_t bytes_ = 0;
  std::vector<uint8_t> scratch_;  // an entry's fields while they are merged into another
};

}  // namespace tw::broker
