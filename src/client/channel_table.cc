#include "tickwire/client/channel_table.h"

namespace tw::client {

ChannelRecord& ChannelTable::introduce(uint32_t channel_id, wire::PayloadKind kind, std::string_view topic) {
  ChannelRecord& ch = channels_[channel_id];
  // The broker never reuses a channel id on a connection, so a CHANNEL sent
  // again for the same topic (before a SNAPSHOT's image, or a new SUBSCRIBE's)
  // names the same stream: its sequence baseline stays, and gap detection
  // with it (docs/protocol.md, "Channel ids").
  if (ch.topic == topic && ch.kind == kind && !topic.empty()) return ch;
  ch.topic.assign(topic);
  ch.kind = kind;
  reset_sequence(ch);
  ch.routing_generation = 0;  // the topic may differ: route again
  return ch;
}

ChannelRecord* ChannelTable::find(uint32_t channel_id) {
  auto it = channels_.find(channel_id);
  return it == channels_.end() ? nullptr : &it->second;
}

ChannelRecord& ChannelTable::get_or_add(uint32_t channel_id) { return channels_[channel_id]; }

void ChannelTable::on_image(ChannelRecord& ch, uint64_t seq) {
  ch.announced_drop = 0;  // an image replaces the state: earlier losses no longer matter
  ch.last_seq = seq;
  ch.has_seq = true;
}

SequenceCheck ChannelTable::on_update(ChannelRecord& ch, uint64_t seq) {
  SequenceCheck check;
  if (ch.has_seq) {
    check.expected = ch.last_seq + 1;
    check.gap = seq != check.expected;
  }
  ch.last_seq = seq;
  ch.has_seq = true;
  return check;
}

}  // namespace tw::client
