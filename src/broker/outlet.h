// Outlet: what the router delivers to. A session (src/session) implements it
// for a connection of any protocol, a gateway for an access point; the
// router knows channels and subscribers, never sockets or encodings.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

#include "cache/channel.h"
#include "output/flushable.h"
#include "tickwire/wire/protocol.h"

namespace tw::output {
class StreamFrames;
}  // namespace tw::output

namespace tw::broker {

// What an outlet does with a subscription's stream while its output is over
// max_output_buffer (docs/ARCHITECTURE.md, "Slow consumers"). Never Default
// here: the router resolves it to the broker's default.
using SlowPolicy = wire::SlowPolicy;

// The result of a client request, for its ACK.
struct Outcome {
  wire::Code code = wire::Code::Ok;
  const char* detail = "";  // a static, user-facing explanation
  // The answer comes later, from another thread, through Outlet::complete_request.
  bool pending = false;
  bool ok() const { return code == wire::Code::Ok; }
};

class Outlet;

// Who asks for a channel by REGISTER: its publisher (held while it lives, so
// the channel is not freed under it) and whether it may create a new one (its
// quotas, session/channel_quota.h; `refusal` says which one is spent).
// `created` says whether it did.
struct Advertiser {
  Outlet* outlet = nullptr;
  bool may_create = true;
  const char* refusal = "";
  bool created = false;
};

// Who published the message being fanned out, and how: facts about one
// message that a channel does not keep, read by the protocols that need them
// (MQTT's No Local and Retain As Published), and the message's attribute
// block. Empty for most publishers. `outlet` is the publisher on this thread
// (null on a gateway); `token` and `access_point` name it across the tiers (a
// token is only set by a publisher that needs its own messages recognised:
// one that subscribes without its own echoes).
struct MessageOrigin {
  const Outlet* outlet = nullptr;
  uint32_t token = 0;
  uint32_t access_point = 0;
  bool retain = false;  // the publisher marked it to be retained (MQTT: RETAIN 1), a flag subscribers may see
  // The channel's last value while the channel is used, not one to keep once
  // nobody is (owned_lifecycle.cc), and not its retained value (keep_retained
  // below). MQTT: a PUBLISH with RETAIN 0.
  bool transient = false;
  // The message's attribute block (cache::Channel::attributes; empty: none).
  // A view, valid during the publish: the router copies it into the channel.
  std::span<const uint8_t> attributes;
  // A tiered broker's copy of a channel: the owner's retained message set
  // aside (cache::Channel::retained), sent with an image of the last value.
  const cache::Channel::SetAside* retained_aside = nullptr;
};

// Before a message is applied to its channel: a transient one leaves the
// retained message as it is (set aside), any other becomes it.
inline void keep_retained(cache::Channel& channel, const MessageOrigin& origin) {
  if (origin.retained_aside) {
    channel.retained = *origin.retained_aside;
  } else if (origin.transient) {
    channel.set_retained_aside();
  } else {
    channel.join_retained();
  }
}

// One message of a channel's stream, as the router fans it out.
struct Delivery {
  const cache::Channel& channel;
  bool image;                                 // a full refresh (publisher sent an image)
  std::span<const uint8_t> payload;           // the published payload
  output::StreamFrames& frames;               // the message encoded once per protocol, on demand
  // The receiving subscription's policy; the router sets it per subscriber
  // (the strictest of the outlet's patterns that cover the channel).
  SlowPolicy policy = SlowPolicy::Conflate;
  // The receiving subscription's conflation interval (0 = real time): the
  // smallest among the outlet's patterns that cover the channel, 0 if any is real time.
  uint32_t conflate_ms = 0;
};

// What the router sends to a connection that provides interactive services
// (PROVIDE): it opens and closes the streams of the channels it serves.
class ProviderOutlet {
 public:
  virtual void send_request(uint32_t stream_id, std::string_view topic) = 0;
  virtual void send_release(uint32_t stream_id) = 0;

 protected:
  ~ProviderOutlet() = default;
};

// What the router sends to a connection whose snapshot or listing requests
// are answered in parts or later (from another thread).
class RequesterOutlet {
 public:
  // One row of a channel listing.
  virtual void send_channel_info(const wire::ChannelInfo& info) = 0;
  // The late answer to a request that returned a pending Outcome: the
  // outlet sends its ACK.
  virtual void complete_request(uint32_t request_id, const Outcome& outcome) = 0;
  // Tiered broker: a gateway sent one page of listing `request_id` and
  // stopped before channel id `next` (`shard_done`: it has no more).
  virtual void listing_page(uint32_t /*request_id*/, cache::ChannelId /*next*/, bool /*shard_done*/) {}

 protected:
  ~RequesterOutlet() = default;
};

class Outlet : public output::Flushable {
 public:
  virtual ~Outlet() = default;
  // Introduces the channel (topic) if needed and sends its current image.
  // request_id 0: the image that starts a subscription stream; otherwise a snapshot reply.
  virtual void send_image(const cache::Channel& channel, uint32_t request_id) = 0;
  // The image that starts (or restarts) a subscription stream, under the
  // subscription's slow-consumer policy: an outlet that is over its output
  // bound may hold it back and send the channel's then-current image later.
  // Like send_delivery, it must not call back into the router.
  virtual void send_stream_image(const cache::Channel& channel, SlowPolicy /*policy*/) { send_image(channel, 0); }
  // The same, for state published before the subscription reached the
  // channel's owner, sent after subscribe returned: a tiered access point gets
  // it from the gateway later (the single-threaded router sends such images
  // from within subscribe). MQTT marks it retained, as those.
  virtual void send_prior_image(const cache::Channel& channel, SlowPolicy policy) { send_stream_image(channel, policy); }
  // Queues one stream message: delivery.frames.get(encoder) gives its frame
  // in the outlet's protocol (encoded at most once per protocol). Must not
  // call back into the router: a connection that has to close only marks itself.
  virtual void send_delivery(const Delivery& delivery) = 0;
  // A channel state change (OK / STALE / CLOSED). `introduce`: the outlet has
  // not been sent this channel yet, so its topic must precede the status.
  // A protocol without channel states (MQTT) has nothing to send.
  virtual void send_status(const cache::Channel& /*channel*/, wire::ChannelState /*state*/, wire::Code /*code*/,
                           std::string_view /*text*/, bool /*introduce*/) {}
  // The roles a connection may take besides receiving streams, where its
  // protocol has them (null: it has not). A protocol implements only what it
  // uses; the router asks once, when the role is taken (PROVIDE, a listing).
  virtual ProviderOutlet* as_provider() { return nullptr; }
  virtual RequesterOutlet* as_requester() { return nullptr; }
  // Who this is, for logs and the admin view ("client-name@host:port").
  virtual std::string_view name() const = 0;
  // Whether a wildcard subscription of this outlet may attach to the channel
  // `topic` with `delay_ms` (its user's entitlements, docs/security.md). Asked
  // when a channel and a wildcard meet, never per message.
  virtual bool entitled(std::string_view /*topic*/, uint32_t /*delay_ms*/) const { return true; }

  // Names the connection behind this outlet the same way in every gateway of
  // a tiered broker (their shared provider loads); here, the outlet itself.
  virtual uint64_t provider_key() const { return reinterpret_cast<uintptr_t>(this); }

  // How other threads address this outlet (a tiered broker's connection id); 0 = not addressable.
  uint32_t token = 0;
};

}  // namespace tw::broker
