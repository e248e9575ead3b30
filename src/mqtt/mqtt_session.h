// MqttSession: a connection speaking MQTT 3.1.1 or 5.0 (docs/mqtt.md) over
// any transport: TCP and TLS today, WebSocket through the same Transport
// seam later. The session layer (src/session) does the transport, the
// lifecycle and the delivery policy; this class is the protocol: it cuts
// and decodes packets (codec.h), answers CONNECT, PINGREQ and the QoS
// handshakes, turns SUBSCRIBE and PUBLISH into Router calls, and publishes
// the Will of a connection that ends without DISCONNECT. One file per
// packet family:
//   mqtt_session.cc  framing, CONNECT/CONNACK, PINGREQ, DISCONNECT, Will
//   publish.cc       PUBLISH in, PUBACK/PUBREC/PUBREL/PUBCOMP, topic aliases
//   subscribe.cc     SUBSCRIBE/SUBACK, UNSUBSCRIBE/UNSUBACK, what reaches the client
//   reliable.cc      QoS 1 and 2 to subscribers: the in-flight window, acknowledgements, redelivery
//   session_state.cc state kept between connections (session expiry, takeover)
//   identity.cc      who the client is, and what it may do (the entitlement seam)
#pragma once
#include <atomic>
#include <deque>
#include <cstdint>
#include <functional>
#include <string_view>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "mqtt/client_registry.h"
#include "mqtt/server_state.h"
#include "mqtt/codec.h"
#include "mqtt/encoder.h"
#include "mqtt/outbound.h"
#include "mqtt/shared_groups.h"
#include "mqtt/topic_map.h"
#include "queue/mailbox.h"
#include "session/session.h"

namespace tw::mqtt {

// What the client said about itself in CONNECT. The credentials are kept
// for the entitlement check (identity.cc), which does not use them yet.
struct Identity {
  std::string client_id;
  std::string username;
  std::string password;
  bool has_username = false;
  bool has_password = false;
};

enum class Access { Connect, Publish, Subscribe };

class MqttSession final : public session::Session, public queue::PortHandler, private session::OwnCopies {
 public:
  // `shared`: the broker's MQTT state (client identifiers, stored sessions, shared groups); outlives the session.
  MqttSession(Env env, ServerState& shared, std::unique_ptr<session::Transport> transport, std::string peer,
              uint64_t now_ns);
  ~MqttSession() override;

  // Outlet: what reaches an MQTT client (subscribe.cc).
  void send_image(const cache::Channel& channel, uint32_t request_id) override;
  void send_stream_image(const cache::Channel& channel, broker::SlowPolicy policy) override;
  void send_prior_image(const cache::Channel& channel, broker::SlowPolicy policy) override;
  void send_delivery(const broker::Delivery& delivery) override;
  // MQTT has no channel status (Session would send it through the policy).
  void send_status(const cache::Channel&, wire::ChannelState, wire::Code, std::string_view, bool) override {}

  // How often the tick of an idle connection reads its takeover flag.
  static constexpr uint64_t kTakeoverPollNs = 1'000'000'000;
  // How long a CONNECT with Clean Start 0 that took over a live connection
  // waits for that connection's session (it notices within kTakeoverPollNs).
  static constexpr uint64_t kHandoverWaitNs = 3'000'000'000;
  // The Receive Maximum the broker states: QoS 2 messages awaiting PUBREL.
  static constexpr uint16_t kReceiveMaximum = 64;
  // Topic aliases a client may set (MQTT 5), per connection.
  static constexpr uint16_t kTopicAliasMaximum = 64;
  // How long a connection refused with a DISCONNECT in the middle of its PUBLISHes (Receive
  // Maximum exceeded, a bad topic alias) is still read, its input discarded, before it is
  // closed: see refuse_draining.
  static constexpr uint64_t kDrainNs = 2'000'000'000;
  // Topic aliases the broker assigns to a client, at most (and at most the client's Topic Alias Maximum).
  static constexpr uint16_t kOutboundAliasMaximum = 256;

 protected:
  size_t parse(std::span<const uint8_t> in) override;
  size_t encode_goodbye(std::span<uint8_t> out, wire::Code code, std::string_view text) override;
  // The client drives keepalive with PINGREQ; the tick sends held channels
  // (a full window, then room) and notices a takeover. Another loop thread
  // flags a takeover and cannot wake this session: the flag is read on
  // input, and by a tick at most kTakeoverPollNs apart (an idle connection
  // is visited once a second, not every tick; the idle deadline is the
  // session layer's).
  void on_open_tick(uint64_t now_ns) override;
  uint64_t open_tick_due_ns() const override {
    if (drain_deadline_ns_ != 0) return drain_deadline_ns_;
    return takeover_check_ns_;
  }
  void on_finish() override;
  bool holds_hello() const override { return handover_deadline_ns_ != 0; }
  void poll_held_hello(uint64_t now_ns) override;
  void on_settled() override { resuming_ = false; }  // a resume's catch-up images came
  // A PUBLISH held at the broker's PublishFence goes on once it is reached (publish.cc).
  void pace() override;
  bool can_pace() const override;
  // The store's answers to the QoS 1 and 2 PUBLISHes it was given (publish.cc).
  void on_store_frames(std::span<const uint8_t> frames, uint32_t answered) override;

 private:
  // Heterogeneous lookup by topic: no allocation per message.
  struct TopicHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Subscription {
    std::string filter;
    Patterns patterns;
    uint8_t retain_handling = 0;
    uint8_t qos = 0;  // granted: the most a message reaches the client with
    uint32_t id = 0;  // MQTT 5 Subscription Identifier; 0: none
    bool no_local = false;             // the client's own messages do not come back through it
    bool retain_as_published = false;  // live messages keep the RETAIN flag they were published with
    // A shared subscription ("$share/GROUP/filter"): where its own filter
    // starts, and this connection's place in the group; null otherwise.
    size_t filter_at = 0;
    SharedGroups::Member* share = nullptr;
    std::string_view own_filter() const { return std::string_view(filter).substr(filter_at); }
  };

  void handle(const Packet& packet);
  void handle_connect(const Packet& packet);
  void handle_publish(const Packet& packet);
  void handle_pub_response(const Packet& packet);
  void handle_subscribe(const Packet& packet);
  void handle_unsubscribe(const Packet& packet);
  void handle_disconnect(const Packet& packet);
  // Bad input: counted; MQTT 5 clients get a DISCONNECT with `reason`.
  void refuse(Reason reason, std::string_view text);
  // As refuse, for a client that may still be writing when the DISCONNECT
  // goes (it pipelines PUBLISHes): the DISCONNECT is sent, then the input is
  // read and discarded, nothing more sent, until the client closes or
  // kDrainNs pass. Closing at once would make the client's next write draw
  // a reset, and a client that then fails to write never reads the
  // DISCONNECT waiting behind the packets before it. 3.1.1: as refuse.
  void refuse_draining(Reason reason, std::string_view text);
  bool draining() const { return drain_deadline_ns_ != 0; }
  // Refuses a CONNECT with a CONNACK carrying `reason`, then closes.
  void refuse_connect(Version v, Reason reason, std::string_view text);
  template <typename Encode>
  void queue_packet(size_t max_size, Encode&& encode) {
    output().queue(max_size, encode);
  }

  // publish.cc
  // The topic a PUBLISH names, after its topic alias; false (and refused) when invalid.
  bool resolve_topic(const Publish& msg, std::string_view& topic);
  // Publishes into the broker, with the message's forwarded properties
  // (codec.h); the MQTT 5 reason for the acknowledgement.
  Reason publish_to_channel(std::string_view topic, std::span<const uint8_t> payload, bool retain = false,
                            std::span<const uint8_t> properties = {});
  // `qos`: the PUBLISH's, the most its subscribers get it with (a Will's: 2 until it keeps its own).
  std::span<const uint8_t> forwarded_properties(const Properties& properties, uint8_t qos = 2);
  void send_pub_response(PacketType type, uint16_t packet_id, Reason reason);
  // With a store: a QoS 1 or 2 PUBLISH goes to it too (the queues it matches,
  // docs/guaranteed.md), and its PUBACK or PUBREC waits for the store's
  // answer, sent once it is durable (on_store_frames).
  void store_publish(std::string_view topic, const Publish& msg, std::span<const uint8_t> forwarded);
  void answer_stored(uint64_t message_id, wire::Code code, std::string_view text);
  const std::shared_ptr<queue::Port>& port();

  // subscribe.cc
  // Whether the filter can be subscribed, and its broker patterns.
  Reason check_filter(std::string_view filter, Patterns& mapped);
  void add_subscription(const TopicFilter& t, const Patterns& patterns, uint32_t id);
  bool remove_subscription(std::string_view filter);
  // Whether the channel may reach this client: '$' topics only through
  // filters with a literal first level, a shared subscription's channels
  // only at the member they hash to; nothing above its Maximum Packet Size.
  bool wants(const cache::Channel& channel) const;
  // Whether this subscription delivers the channel to this connection.
  static bool applies(const Subscription& s, const cache::Channel& channel);
  void leave_group(Subscription& s);
  std::string share_key(const Subscription& s) const;
  // No Local [MQTT-3.8.3-3]: the message being fanned out is this client's
  // own, and every subscription that would deliver it has No Local.
  bool own_echo(const cache::Channel& channel) const;
  // Retain As Published [MQTT-3.3.1-13]: it was published with RETAIN 1 and
  // a subscription that delivers it keeps that flag.
  bool keeps_retain(const cache::Channel& channel) const;
  // The channel's image with RETAIN 1 (the retained message, or a live one under Retain As Published).
  void send_as_retained(const cache::Channel& channel, broker::SlowPolicy policy);
  bool fits(size_t packet_size);
  bool image_fits(const cache::Channel& channel);
  // Whether the channel's last message has a Message Expiry Interval (for
  // every client: a 3.1.1 one is not sent an expired message either).
  static bool expires(const cache::Channel& channel);

  // reliable.cc: PUBLISHes of the client's own (docs/mqtt.md): QoS 1 and 2,
  // subscription identifiers, topic aliases; QoS 0 without them shares one encoding.
  // The QoS the channel's message reaches this client with: the highest
  // granted among its subscriptions that cover it (3.3.4), 0 for none, and
  // at most the QoS it was published with [MQTT-3.8.4-8].
  uint8_t delivery_qos(const cache::Channel& channel) const;
  // Whether this client's PUBLISHes of the channel are its own (not the shared encoding).
  bool own_publish(uint8_t qos) const { return qos > 0 || rewrites_; }
  // OwnCopies: the delivery policy's copies of this client's own. A PUBLISH
  // whose shared QoS 0 encoding is `qos0`, rewritten for this client (QoS 1
  // and 2 into the in-flight window, which the policy found with room).
  session::Copy copy_of(const cache::Channel& channel) override;
  bool window_full() const override { return outbound_.full(); }
  void send_copy(const cache::Channel& channel, std::span<const uint8_t> qos0, session::Copy copy) override;
  // The channel's image the same way (retained while subscribing).
  void send_copy_image(const cache::Channel& channel, session::Copy copy) override;
  // `qos0` rewritten as `r` says, copied into the output.
  void queue_rewritten(std::span<const uint8_t> qos0, const PublishRewrite& r);
  // The subscription identifiers of the subscriptions that deliver the channel.
  std::span<const uint32_t> subscription_ids(const cache::Channel& channel);
  // The alias for the topic, assigning a free one; false when none is left.
  bool outbound_alias(std::string_view topic, PublishRewrite& r);
  void handle_outbound_ack(const PubResponse& msg);
  // A resumed session's unacknowledged messages, resent in order (4.4).
  void redeliver(std::vector<OutboundMessage> messages);
  void update_rewrites();

  // session_state.cc: state that outlives the connection (ClientRegistry).
  // The stored session of this client id, if CONNECT resumes one (Clean Start 0).
  std::optional<StoredSession> take_stored_session(const Connect& c);
  // Subscribes again to the stored subscriptions, after the CONNACK.
  void resume(StoredSession& state);
  // A session that outlives its connection notes the last message of each
  // channel it was sent or offered; a resumed one's catch-up skips the
  // channels with nothing new since (docs/mqtt.md, "Sessions").
  static constexpr size_t kMaxSeen = 100'000;
  void note_seen(const cache::Channel& channel) {
    if (session_expiry_s_ == 0) return;
    if (auto it = seen_.find(channel.topic); it != seen_.end()) {
      it->second = channel.seq;
    } else if (seen_.size() < kMaxSeen) {
      seen_.emplace(channel.topic, channel.seq);
    }
  }
  bool seen_already(const cache::Channel& channel) const {
    auto it = seen_.find(channel.topic);
    return it != seen_.end() && it->second == channel.seq;
  }
  // Removes the stored messages of topics this user may no longer receive live (counted).
  void drop_unentitled(std::vector<OutboundMessage>& messages);
  // At the end of the connection: keeps the state if the session outlives
  // it, or hands it to the connection that took this one over.
  ClientRegistry::Ended store_session();
  // With a store: the stored sessions on disk, read into the registry once
  // per broker (before the first CONNECT is answered); this session's file
  // written (it outlives its connection: `ended_at_ns` is when the connection
  // ended, 0 while it lives) or removed (it ends with its connection).
  void load_persisted_sessions();
  void persist_session(uint64_t ended_at_ns = 0);

  // queued.cc: a stored session's queue on the store (docs/mqtt.md,
  // "Sessions"): with a store, every QoS 1 and 2 message an MQTT publisher
  // stored reaches a session that outlives its connection from its queue,
  // never live, while connected and while away alike.
  static constexpr uint32_t kQueueBind = 1;
  // The broker patterns of the QoS 1 and 2 subscriptions among `subs` (shared ones are live only).
  std::vector<std::string> queue_patterns(const std::vector<StoredSession::Subscription>& subs);
  std::vector<StoredSession::Subscription> stored_subscriptions() const;
  // The queue attracts `patterns` from now on (before the live subscriptions they
  // come with, so that no message falls between); `expires_ns`: when it is deleted (wall clock, 0: never).
  void update_queue(std::vector<std::string> patterns, uint64_t expires_ns = 0);
  // Whether the channel's message reaches this session from its queue instead.
  bool from_queue(const cache::Channel& channel) const;
  // A DELIVER of the queue sent as a PUBLISH; false when the window is full (it waits).
  bool send_queued(std::span<const uint8_t> frame);
  void send_waiting_queued();
  void queued_acknowledged(uint16_t packet_id);

  // After authentication (none, a certificate, anonymous, or a password
  // checked off the loop: on_login): the rest of CONNECT, at once or once a
  // connection it took over has handed its session over.
  void accept_connect(const Connect& c, bool assigned_client_id);
  void finish_connect(const Connect& c, bool assigned_client_id, std::optional<StoredSession> resumed);
  // The keep-alive the connection uses; sets Server Keep Alive when the broker caps it.
  uint16_t keepalive_for(const Connect& c, uint16_t& server_keep_alive) const;
  // The CONNECT kept in pending_connect_ (c views it); false: refused as malformed.
  bool decode_pending_connect(Connect& c);
  void on_login(std::shared_ptr<const auth::Grants> grants, std::string_view error) override;

  // identity.cc: the one place entitlements plug in.
  bool permitted(Access access, std::string_view topic_or_filter) const;
  // Whether the user may publish its Will now, by the users file in force (not the grants held).
  bool will_permitted() const;
  // mqtt_session.cc: the Will, at once or after its Will Delay Interval (pending_wills.h).
  void publish_will();
  bool delay_will();
  // A Will the previous connection of this session left pending: dropped
  // when the session resumes, published now when it ended (Clean Start 1).
  void settle_pending_will(bool resumed);

  Version version_ = Version::V311;
  // Set at CONNECT, when the version is known; the delivery policy encodes with it.
  std::unique_ptr<SessionEncoder> encoder_;
  bool subscribing_ = false;      // images sent now predate the subscription: retained
  // The PUBLISH at the head of the input waits at the PublishFence until
  // `fence_ticket_` is reached; fence_passed_: it has, and goes on unchecked.
  bool may_publish_now();
  void leave_fence();
  std::vector<uint64_t> fence_ticket_;
  bool fenced_ = false;
  bool fence_passed_ = false;
  bool resuming_ = false;         // ... and are a resumed session's catch-up: the last values
  bool skip_retained_ = false;    // ... and this subscription wants none (Retain Handling 2)
  Identity identity_;
  std::vector<uint8_t> pending_connect_;  // the CONNECT's body while its password is checked, or its handover awaited
  uint8_t pending_connect_flags_ = 0;
  uint64_t handover_deadline_ns_ = 0;     // waiting for a taken-over connection's session until then; 0: not
  bool assigned_client_id_ = false;       // the CONNECT had no client id: CONNACK names the one given
  // Set by another connection that took this client id over (ClientRegistry).
  std::atomic<bool> taken_over_{false};
  uint64_t takeover_check_ns_ = 0;  // when the tick next reads taken_over_
  uint64_t drain_deadline_ns_ = 0;  // refuse_draining: closed then; 0: not draining
  // A takeover flagged by another connection: DISCONNECT 0x8E and close. True if so.
  bool notice_takeover();
  ServerState& server_;  // the broker's MQTT state
  ClientKey key_;            // whose session: the user and identity_.client_id, set once the login succeeded
  bool registered_ = false;  // this connection holds key_ in the registry
  bool graceful_ = false;         // DISCONNECT (without Will) received: the Will is discarded
  bool has_will_ = false;
  std::string will_topic_;
  std::vector<uint8_t> will_payload_;
  uint8_t will_qos_ = 0;      // a subscriber gets the Will at no more than this QoS
  bool will_retain_ = false;  // its RETAIN flag (seen by Retain As Published subscriptions)
  std::vector<uint8_t> will_properties_;  // its property block, as received (MQTT 5)
  uint32_t will_expiry_s_ = 0;            // its Message Expiry Interval; 0: none
  uint32_t will_delay_s_ = 0;             // its Will Delay Interval (pending_wills.h); 0: none
  bool connacked_ = false;        // CONNACK sent: an MQTT 5 close may now say why with DISCONNECT
  Reason close_reason_ = Reason::Success;  // set by refuse(); Success = derive it from the close code
  uint32_t client_max_packet_ = 0;  // the client's Maximum Packet Size; 0 = none
  bool session_expiry_zero_ = true;  // CONNECT's Session Expiry Interval was 0 (or absent)
  // How long the session outlives the connection, seconds (UINT32_MAX: for
  // ever; 3.1.1's Clean Session 0); 0: it ends with the connection.
  uint32_t session_expiry_s_ = 0;
  std::vector<uint16_t> awaiting_pubrel_;  // QoS 2 packet ids received, not yet released
  SeenSeqs seen_;                           // note_seen()
  std::vector<std::string> topic_aliases_;  // MQTT 5 inbound aliases, index = alias
  std::vector<Subscription> subscriptions_;
  bool reliable_ = false;  // some subscription was granted QoS 1 or 2
  // Every PUBLISH to this client is its own: it uses outbound topic aliases
  // or some subscription has an identifier (MQTT 5).
  bool rewrites_ = false;
  bool no_local_ = false;             // some subscription has No Local
  bool retain_as_published_ = false;  // some subscription has Retain As Published
  OutboundWindow outbound_;
  uint16_t outbound_alias_max_ = 0;  // the client's Topic Alias Maximum, capped
  std::unordered_map<std::string, uint16_t, TopicHash, std::equal_to<>> outbound_aliases_;
  std::vector<uint32_t> ids_scratch_;
  std::vector<uint8_t> rewrite_scratch_;
  std::vector<uint8_t> image_scratch_;  // an image's QoS 0 encoding, before it is rewritten
  std::vector<uint8_t> forwarded_;  // the properties of the PUBLISH being published (codec.h)
  std::string topic_scratch_;       // its topic as the broker's, when it has an empty level (topic_map.h)
  std::unordered_map<std::string, uint32_t> pattern_refs_;  // broker patterns shared by filters
  bool dollar_filters_ = false;   // some filter can match '$' topics
  bool shared_ = false;           // some subscription is shared
  bool publish_refused_logged_ = false;
  std::shared_ptr<queue::Port> port_;  // made at the first PUBLISH the store takes
  uint32_t unanswered_ = 0;            // PUBLISHes the store has not answered
  bool window_full_ = false;           // input paused until it answers one (store.publish_window)
  std::vector<uint16_t> storing_;      // QoS 2 packet ids the store has not answered: a resend waits too
  bool queue_backed_ = false;          // queued.cc
  std::unordered_map<uint16_t, uint64_t> queued_ids_;  // packet id -> queue seq, until PUBACK or PUBREC
  std::deque<std::vector<uint8_t>> queued_waiting_;    // DELIVERs that found the window full
  uint64_t oversize_dropped_ = 0;
  // Channels this connection published to, by topic.
  std::unordered_map<std::string, cache::ChannelId, TopicHash, std::equal_to<>> channels_;
};

}  // namespace tw::mqtt
