// What both parts of a router share (broker/router.h): the limits it is
// configured with, the counters it keeps, its clock, and a listing's cursor.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "broker/outlet.h"
#include "cache/channel.h"
#include "config/config.h"
#include "tickwire/fields/field_list.h"
#include "topic/topic.h"
#include "tickwire/wire/protocol.h"

namespace tw::broker {

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
  // Channels recorded for a delay from their creation (where subscribers are:
  // the single loop, an access point; never a gateway).
  std::vector<config::DelayHistory> delay_history;
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

}  // namespace tw::broker
