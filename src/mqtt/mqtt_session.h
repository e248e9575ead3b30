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
//   session_state.cc state kept between connections (session expiry, takeover)
//   identity.cc      who the client is, and what it may do (the entitlement seam)
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string_view>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "mqtt/client_registry.h"
#include "mqtt/codec.h"
#include "mqtt/encoder.h"
#include "mqtt/topic_map.h"
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

class MqttSession final : public session::Session {
 public:
  MqttSession(Env env, std::unique_ptr<session::Transport> transport, std::string peer, uint64_t now_ns);
  ~MqttSession() override;

  // Outlet: what reaches an MQTT client (subscribe.cc).
  void send_image(const cache::Channel& channel, uint32_t request_id) override;
  void send_stream_image(const cache::Channel& channel, broker::SlowPolicy policy) override;
  void send_prior_image(const cache::Channel& channel, broker::SlowPolicy policy) override;
  void send_delivery(const broker::Delivery& delivery) override;
  // MQTT has no channel status, provider streams nor listings.
  void send_status(const cache::Channel&, wire::ChannelState, wire::Code, std::string_view, bool) override {}
  void send_request(uint32_t, std::string_view) override {}
  void send_release(uint32_t) override {}
  void send_channel_info(const wire::ChannelInfo&) override {}
  void complete_request(uint32_t, const broker::Outcome&) override {}

  // The Receive Maximum the broker states: QoS 2 messages awaiting PUBREL.
  static constexpr uint16_t kReceiveMaximum = 64;
  // Topic aliases a client may set (MQTT 5), per connection.
  static constexpr uint16_t kTopicAliasMaximum = 64;

 protected:
  size_t parse(std::span<const uint8_t> in) override;
  size_t encode_goodbye(std::span<uint8_t> out, wire::Code code, std::string_view text) override;
  // The client drives keepalive with PINGREQ; the tick only notices a takeover.
  void on_open_tick(uint64_t now_ns) override;
  void on_finish() override;

 private:
  struct Subscription {
    std::string filter;
    Patterns patterns;
    uint8_t retain_handling = 0;
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
  // Refuses a CONNECT with a CONNACK carrying `reason`, then closes.
  void refuse_connect(Version v, Reason reason, std::string_view text);
  template <typename Encode>
  void queue_packet(size_t max_size, Encode&& encode) {
    output().queue(max_size, encode);
  }

  // publish.cc
  // The topic a PUBLISH names, after its topic alias; false (and refused) when invalid.
  bool resolve_topic(const Publish& msg, std::string_view& topic);
  // Publishes into the broker; the MQTT 5 reason for the acknowledgement.
  Reason publish_to_channel(std::string_view topic, std::span<const uint8_t> payload);
  void send_pub_response(PacketType type, uint16_t packet_id, Reason reason);

  // subscribe.cc
  // Whether the filter can be subscribed, and its broker patterns.
  Reason check_filter(std::string_view filter, Patterns& mapped);
  void add_subscription(const TopicFilter& t, const Patterns& patterns);
  bool remove_subscription(std::string_view filter);
  // Whether the channel may reach this client: '$' topics only through
  // filters with a literal first level; nothing above its Maximum Packet Size.
  bool wants(const cache::Channel& channel) const;
  bool fits(size_t packet_size);
  bool image_fits(const cache::Channel& channel);

  // session_state.cc: state that outlives the connection (ClientRegistry).
  // The stored session of this client id, if CONNECT resumes one (Clean Start 0).
  std::optional<StoredSession> take_stored_session(const Connect& c);
  // Subscribes again to the stored subscriptions, after the CONNACK.
  void resume(const StoredSession& state);
  // At the end of the connection: keeps the state if the session outlives it.
  void store_session();

  // After authentication (none, a certificate, anonymous, or a password
  // checked off the loop: on_login): the rest of CONNECT.
  void accept_connect(const Connect& c, bool assigned_client_id);
  void on_login(std::shared_ptr<const auth::Grants> grants, std::string_view error) override;

  // identity.cc: the one place entitlements plug in.
  bool permitted(Access access, std::string_view topic_or_filter) const;

  Version version_ = Version::V311;
  // Set at CONNECT, when the version is known; the delivery policy encodes with it.
  std::unique_ptr<SessionEncoder> encoder_;
  bool subscribing_ = false;      // images sent now predate the subscription: retained
  bool skip_retained_ = false;    // ... and this subscription wants none (Retain Handling 2)
  Identity identity_;
  std::vector<uint8_t> pending_connect_;  // the CONNECT's body while its password is checked
  uint8_t pending_connect_flags_ = 0;
  // Set by another connection that took this client id over (ClientRegistry).
  std::atomic<bool> taken_over_{false};
  bool registered_ = false;  // this connection holds identity_.client_id in the registry
  bool graceful_ = false;         // DISCONNECT (without Will) received: the Will is discarded
  bool has_will_ = false;
  std::string will_topic_;
  std::vector<uint8_t> will_payload_;
  bool connacked_ = false;        // CONNACK sent: an MQTT 5 close may now say why with DISCONNECT
  Reason close_reason_ = Reason::Success;  // set by refuse(); Success = derive it from the close code
  uint32_t client_max_packet_ = 0;  // the client's Maximum Packet Size; 0 = none
  bool session_expiry_zero_ = true;  // CONNECT's Session Expiry Interval was 0 (or absent)
  // How long the session outlives the connection, seconds (UINT32_MAX: for
  // ever; 3.1.1's Clean Session 0); 0: it ends with the connection.
  uint32_t session_expiry_s_ = 0;
  std::vector<uint16_t> awaiting_pubrel_;  // QoS 2 packet ids received, not yet released
  std::vector<std::string> topic_aliases_;  // MQTT 5 inbound aliases, index = alias
  std::vector<Subscription> subscriptions_;
  std::unordered_map<std::string, uint32_t> pattern_refs_;  // broker patterns shared by filters
  bool dollar_filters_ = false;   // some filter can match '$' topics
  bool publish_refused_logged_ = false;
  uint64_t oversize_dropped_ = 0;
  // Channels this connection published to, by topic (heterogeneous lookup: no allocation per PUBLISH).
  struct TopicHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, cache::ChannelId, TopicHash, std::equal_to<>> channels_;
  uint32_t channels_created_ = 0;  // by this connection's publishes, against max_channels_per_connection
};

}  // namespace tw::mqtt
