// Per-connection channel state: topic, payload kind and last sequence number,
// keyed by the broker's channel id. Forgotten on every reconnect because ids
// and sequences belong to one connection's view of the broker.
//
// Gap rule: an IMAGE sets the baseline and is never a gap; an UPDATE is a gap
// when a baseline exists and its seq != last + 1. Either way the update's seq
// becomes the new baseline, so one lost message counts as one gap.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "tickwire/wire/protocol.h"

namespace tw::client {

struct ChannelRecord {
  std::string topic;
  wire::PayloadKind kind = wire::PayloadKind::FieldList;
  uint64_t last_seq = 0;
  bool has_seq = false;
  uint64_t announced_drop = 0;  // messages the broker said it dropped before the next update
  // Dispatch cache: the subscription chosen for this topic at routing_generation.
  uint32_t routed_subscription = 0;
  uint64_t routing_generation = 0;
};

struct SequenceCheck {
  bool gap = false;
  uint64_t expected = 0;  // last + 1, or 0 without a baseline
};

class ChannelTable {
 public:
  // CHANNEL frame: introduces a channel. Sent again for the same topic, it
  // changes nothing (the baseline stays); for another topic, the record is overwritten.
  ChannelRecord& introduce(uint32_t channel_id, wire::PayloadKind kind, std::string_view topic);
  ChannelRecord* find(uint32_t channel_id);
  // The first IMAGE/UPDATE of an unintroduced channel still gets a record (empty topic).
  ChannelRecord& get_or_add(uint32_t channel_id);

  static void on_image(ChannelRecord& ch, uint64_t seq);
  static SequenceCheck on_update(ChannelRecord& ch, uint64_t seq);
  // Drops the sequence baseline (unsubscribed, or channel CLOSED).
  static void reset_sequence(ChannelRecord& ch) { ch.has_seq = false; ch.last_seq = 0; ch.announced_drop = 0; }

  template <typename Fn>
  void for_each(Fn&& fn) { for (auto& [id, ch] : channels_) fn(id, ch); }
  void clear() { channels_.clear(); }
  size_t size() const { return channels_.size(); }

 private:
  std::unordered_map<uint32_t, ChannelRecord> channels_;
};

}  // namespace tw::client
