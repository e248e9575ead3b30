// IT14 helpers: the per-channel bookkeeping of one subscriber under the
// slow-consumer policies, and the broker's RSS. Everything here is per
// channel, never per message, so a long run keeps the test's memory bounded.
#pragma once
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

#include "tickwire/fields/field_list.h"
#include "it_support.h"

namespace tw::it::slow {

// The resident set size of process `pid` in KiB (0 when unreadable).
inline uint64_t rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      uint64_t kib = 0;
      status >> kib;
      return kib;
    }
    std::getline(status, key);
  }
  return 0;
}

// What one subscriber saw of each channel.
struct Seen {
  std::string topic;  // from CHANNEL: ids are the broker's, not the publisher's order
  uint64_t seq = 0;
  fields::FieldImage image;
  uint64_t announced = 0;  // from the last MESSAGES_DROPPED, consumed by the next UPDATE
  uint64_t refreshes = 0;  // IMAGEs that jumped the seq
  uint64_t notices = 0;
  uint64_t dropped = 0;
};

// Applies stream frames with the per-policy rules; violations go to errors
// (the first few only: a broken run must not fill the memory with them).
struct Subscriber {
  static constexpr size_t kKeptErrors = 16;

  std::map<uint32_t, Seen> by_id;
  std::vector<std::string> errors;
  uint64_t error_count = 0;
  uint64_t updates = 0;
  uint64_t stream_images = 0;

  void fail(std::string why) {
    if (errors.size() < kKeptErrors) errors.push_back(std::move(why));
    ++error_count;
  }

  void apply(const OwnedFrame& f) {
    if (auto intro = f.as<wire::ChannelIntro>()) {
      by_id[intro->channel_id].topic = std::string(intro->topic);
    } else if (auto m = f.as<wire::Image>()) {
      if (m->request_id != 0) return;
      Seen& s = by_id[m->channel_id];
      if (s.seq != 0 && m->seq != s.seq + 1) ++s.refreshes;
      s.seq = m->seq;
      if (!s.image.replace(m->payload)) fail("bad image payload");
      ++stream_images;
    } else if (auto u = f.as<wire::Update>()) {
      Seen& s = by_id[u->channel_id];
      if (s.seq == 0) fail("UPDATE before IMAGE");
      if (u->seq != s.seq + 1 + s.announced) {
        fail("channel " + std::to_string(u->channel_id) + ": UPDATE seq " + std::to_string(u->seq) + " after " +
             std::to_string(s.seq) + " with " + std::to_string(s.announced) + " announced");
      }
      s.announced = 0;
      s.seq = u->seq;
      if (!s.image.merge(u->payload)) fail("bad update payload");
      ++updates;
    } else if (auto st = f.as<wire::StatusMsg>()) {
      if (st->code != wire::Code::MessagesDropped || st->state != wire::ChannelState::Ok) {
        fail("unexpected STATUS " + describe(f));
        return;
      }
      Seen& s = by_id[st->channel_id];
      const uint64_t count = std::stoull(std::string(st->text));
      s.announced += count;
      s.dropped += count;
      ++s.notices;
    } else if (f.type() == wire::MsgType::Error) {
      fail("ERROR " + describe(f));
    }
  }
};

}  // namespace tw::it::slow
