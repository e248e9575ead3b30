// Channel messages as JSON text, for the broker's protocols that speak JSON
// to their clients: MQTT (a field-list channel's payload, src/mqtt) and the
// browser stream (/stream, src/stream). The text is `tickwire sub --json`'s,
// from the same code (fields/json.h):
//   {"type":"update","topic":"DEMO/EQ/AAPL","channel":7,"seq":13,"fields":{"BID":"189.26"}}
//
// A message is rendered once per loop thread for an encoder's size query
// (..._max) and the encode that follows: both ask for the same text, and the
// encode calls forget() (a later message could look the same: a channel
// freed and another at its address, with the same seq). Not for messages
// encoded once per subscriber in a hot loop: rendering allocates.
// Per loop thread (thread_local memo).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "cache/channel.h"
#include "tickwire/wire/protocol.h"

namespace tw::channel_json {

// A stream message's payload (an update, or a published image when `image`) as JSON.
std::span<const uint8_t> of_message(const cache::Channel& channel, std::span<const uint8_t> payload, bool image);
// The channel's cached (merged) image as JSON: every field's latest value.
std::span<const uint8_t> of_image(const cache::Channel& channel);
// The encode that used the memo's text is done: the next message renders its own. Returns `encoded`.
size_t forget(size_t encoded);
// A status notice (state change, or a gap notice with code MessagesDropped)
// as JSON; not memoized (one per subscriber, rare).
std::string of_status(const cache::Channel& channel, wire::ChannelState state, wire::Code code,
                      std::string_view text);

}  // namespace tw::channel_json
