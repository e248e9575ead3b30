#include "mqtt/mqtt_session.h"

#include <algorithm>
#include <limits>

#include "base/clock.h"
#include "base/log.h"
#include "base/rate_limit.h"
#include "mqtt/client_registry.h"
#include "mqtt/encoder.h"
#include "mqtt/session_file.h"
#include "queue/spool.h"

namespace tw::mqtt {

namespace {
constexpr size_t kConnackMax = 64 + 0xFFFF;  // fixed part + properties + an assigned client id
constexpr uint64_t kNoTimeout = std::numeric_limits<uint64_t>::max() / 2;

// What a close without an explicit reason means to an MQTT 5 client.
Reason reason_for(wire::Code code) {
  switch (code) {
    case wire::Code::IdleTimeout: return Reason::KeepAliveTimeout;
    case wire::Code::SlowConsumer: return Reason::QuotaExceeded;
    case wire::Code::ServerShutdown: return Reason::ServerShuttingDown;
    case wire::Code::FrameTooLarge: return Reason::PacketTooLarge;
    case wire::Code::NotAuthorized: return Reason::NotAuthorized;  // the user was removed
    case wire::Code::NotPrimary: return Reason::UseAnotherServer;  // an HA backup, or a deposed primary
    default: return Reason::UnspecifiedError;
  }
}
// Before CONNECT nothing is delivered; the policy needs an encoder all the same.
const SessionEncoder& unconnected_encoder() {
  static const bool never_retained = false;
  static const SessionEncoder encoder(MqttEncoder::instance(Version::V311), never_retained, never_retained);
  return encoder;
}
}  // namespace

MqttSession::MqttSession(Env env, ServerState& shared, std::unique_ptr<session::Transport> transport, std::string peer,
                         uint64_t now_ns)
    : Session(env, std::move(transport), std::move(peer), unconnected_encoder(), now_ns), server_(shared) {
  set_own_copies(*this);
}

MqttSession::~MqttSession() {
  if (port_) {
    port_->handler = nullptr;  // answers already on their way are dropped
    env().spool->detach(port_);
  }
  for (Subscription& s : subscriptions_) leave_group(s);
  if (registered_) server_.clients.release(key_, &taken_over_);
}

void MqttSession::on_open_tick(uint64_t now_ns) {
  if (draining()) {
    if (now_ns >= drain_deadline_ns_) fail(wire::Code::Ok, "refused, and not closed by the client in time");
    return;
  }
  notice_takeover();
  takeover_check_ns_ = now_ns + kTakeoverPollNs;
}

bool MqttSession::notice_takeover() {
  if (!taken_over_.load(std::memory_order_relaxed) || closing()) return false;
  if (connacked_) {  // no DISCONNECT before CONNACK: a connection still waiting to be answered just closes
    queue_packet(64, [&](std::span<uint8_t> out) {
      return encode_disconnect(out, version_, Reason::SessionTakenOver, "");
    });
  }
  fail(wire::Code::Ok, "a new connection took over this client id", true);  // the DISCONNECT is queued
  return true;
}

size_t MqttSession::parse(std::span<const uint8_t> in) {
  if (notice_takeover() || draining()) return in.size();
  size_t pos = 0;
  while (!closing() && !draining() && !login_pending()) {  // packets behind a CONNECT wait for its login
    Packet packet;
    const Split split = split_packet(in.subspan(pos), env().config.limits.max_frame, packet);
    if (split == Split::NeedMore) break;
    if (split == Split::Malformed) {
      refuse(Reason::MalformedPacket, "malformed fixed header");
      break;
    }
    if (split == Split::TooLarge) {
      refuse(Reason::PacketTooLarge, "packet larger than the broker's Maximum Packet Size (max_frame)");
      break;
    }
    if (packet.type == PacketType::Publish && !may_publish_now()) break;  // read again once the fence is reached
    ++env().counters.frames_in;
    handle(packet);
    pos += packet.size;
  }
  return pos;
}

// The one dispatch switch of the MQTT protocol.
void MqttSession::handle(const Packet& packet) {
  if (!is_open()) {
    if (packet.type == PacketType::Connect) return handle_connect(packet);
    return refuse(Reason::ProtocolError, "the first packet must be CONNECT");  // [MQTT-3.1.0-1]
  }
  switch (packet.type) {
    case PacketType::Publish: return handle_publish(packet);
    case PacketType::Puback:
    case PacketType::Pubrec:
    case PacketType::Pubrel:
    case PacketType::Pubcomp: return handle_pub_response(packet);
    case PacketType::Subscribe: return handle_subscribe(packet);
    case PacketType::Unsubscribe: return handle_unsubscribe(packet);
    case PacketType::Pingreq:
      if (auto f = decode_pingreq(packet); !f.ok()) return refuse(f.reason, f.text);
      return queue_packet(2, [](std::span<uint8_t> out) { return encode_pingresp(out); });
    case PacketType::Disconnect: return handle_disconnect(packet);
    case PacketType::Connect: return refuse(Reason::ProtocolError, "CONNECT sent twice");  // [MQTT-3.1.0-2]
    case PacketType::Auth:
      if (version_ == Version::V5) return refuse(Reason::ProtocolError, "AUTH without an authentication method");
      break;
    default: break;
  }
  refuse(Reason::ProtocolError, "packet type a client must not send");
}

void MqttSession::refuse(Reason reason, std::string_view text) {
  ++env().counters.protocol_errors;
  close_reason_ = reason;
  const wire::Code code = reason == Reason::PacketTooLarge ? wire::Code::FrameTooLarge : wire::Code::MalformedFrame;
  fail(code, std::string("MQTT ") + reason_name(reason) + ": " + std::string(text));
}

void MqttSession::refuse_draining(Reason reason, std::string_view text) {
  if (version_ != Version::V5 || !connacked_) return refuse(reason, text);
  ++env().counters.protocol_errors;
  queue_packet(64, [&](std::span<uint8_t> out) { return encode_disconnect(out, version_, reason, ""); });
  drain_deadline_ns_ = env().reactor.now_ns() + kDrainNs;
  TW_WARN_LIMITED("session %s ('%.*s') disconnected: MQTT %s: %.*s", peer().c_str(),
                  static_cast<int>(identity_.client_id.size()), identity_.client_id.data(), reason_name(reason),
                  static_cast<int>(text.size()), text.data());
}

void MqttSession::refuse_connect(Version v, Reason reason, std::string_view text) {
  ++env().counters.protocol_errors;
  Connack connack;
  connack.reason = reason;
  queue_packet(kConnackMax, [&](std::span<uint8_t> out) { return encode_connack(out, v, connack); });
  fail(wire::Code::Ok, std::string("MQTT CONNECT refused: ") + reason_name(reason) + ": " + std::string(text), true);
}

void MqttSession::handle_connect(const Packet& packet) {
  Connect c;
  const Fault f = decode_connect(packet, c);
  if (f.reason == Reason::UnsupportedProtocolVersion) return refuse_connect(Version::V311, f.reason, f.text);
  // A malformed CONNECT: MQTT 5 may say why in a CONNACK, 3.1.1 just closes.
  if (!f.ok()) return c.version == Version::V5 ? refuse_connect(c.version, f.reason, f.text) : refuse(f.reason, f.text);
  if (!c.properties.auth_method.empty()) {
    return refuse_connect(c.version, Reason::BadAuthenticationMethod, "enhanced authentication is not supported");
  }
  if (c.client_id.empty() && c.version == Version::V311 && !c.clean_start) {
    return refuse_connect(c.version, Reason::ClientIdentifierNotValid, "empty client id without Clean Session");
  }
  version_ = c.version;
  identity_ = {std::string(c.client_id), std::string(c.username),
               std::string(reinterpret_cast<const char*>(c.password.data()), c.password.size()), c.has_username,
               c.has_password};
  if (identity_.client_id.empty()) identity_.client_id = "tw-" + peer();
  pending_connect_.assign(packet.body.begin(), packet.body.end());  // for a login or a handover to come
  pending_connect_flags_ = packet.flags;
  auth::Authority* authority = env().authority;
  if (authority == nullptr) return accept_connect(c, identity_.client_id != c.client_id);
  // Who it is (docs/security.md): a user name and password, checked off the
  // loop (the CONNECT is decoded again from its copy once answered), else a
  // mapped TLS client certificate, else anonymous where allowed.
  if (identity_.has_username) return begin_login(identity_.username, identity_.password);
  auto grants = authority->for_certificate(peer_names());
  if (!grants) grants = authority->for_anonymous();
  if (!grants) {
    ++env().counters.auth_failures;
    return refuse_connect(version_, Reason::NotAuthorized, "authentication required: a user name and password");
  }
  set_grants(std::move(grants));
  accept_connect(c, identity_.client_id != c.client_id);
}

void MqttSession::on_login(std::shared_ptr<const auth::Grants> grants, std::string_view error) {
  if (!grants) {
    ++env().counters.auth_failures;
    return refuse_connect(version_, login_was_busy() ? Reason::ConnectionRateExceeded : Reason::BadUserNameOrPassword, error);
  }
  set_grants(std::move(grants));
  Connect c;
  if (decode_pending_connect(c)) accept_connect(c, identity_.client_id != c.client_id);
}

bool MqttSession::decode_pending_connect(Connect& c) {
  Packet packet{PacketType::Connect, pending_connect_flags_, pending_connect_, pending_connect_.size()};
  if (decode_connect(packet, c).ok()) return true;  // it decoded once already
  refuse(Reason::MalformedPacket, "CONNECT");
  return false;
}

void MqttSession::accept_connect(const Connect& c, bool assigned) {
  if (!permitted(Access::Connect, {})) return refuse_connect(version_, Reason::NotAuthorized, "not authorized");
  // The session is the user's: another user's CONNECT with this client id is another session (client_registry.h).
  key_ = {grants() != nullptr ? grants()->user() : std::string(), identity_.client_id};
  load_persisted_sessions();
  // [MQTT-3.1.4-2]: a live connection with this id is told to go. With Clean Start 0 its session
  // continues here [MQTT-3.1.2-5]: it is handed over as that connection ends, on its own loop thread.
  const bool took_over = server_.clients.claim(key_, &taken_over_, !c.clean_start);
  registered_ = true;
  if (took_over && !c.clean_start) {
    handover_deadline_ns_ = monotonic_ns() + kHandoverWaitNs;
    assigned_client_id_ = assigned;
    pause_input(true);
    return;
  }
  finish_connect(c, assigned, take_stored_session(c));
  pending_connect_ = {};  // only now: c may view it
}

void MqttSession::poll_held_hello(uint64_t now_ns) {
  if (notice_takeover()) return;  // taken over in turn while waiting
  std::optional<std::optional<StoredSession>> handed =
      server_.clients.take_handover(key_, &taken_over_);
  if (!handed && now_ns < handover_deadline_ns_) return;
  if (!handed) {
    server_.clients.stop_waiting(&taken_over_);
    TW_DEBUG("session %s: '%s' was not handed over in time: a new session", peer().c_str(), identity_.client_id.c_str());
  }
  handover_deadline_ns_ = 0;
  Connect c;
  if (!decode_pending_connect(c)) return;
  finish_connect(c, assigned_client_id_, handed ? std::move(*handed) : std::nullopt);
  pending_connect_ = {};  // only now: c views it
  if (!closing()) resume_input();
}

void MqttSession::finish_connect(const Connect& c, bool assigned, std::optional<StoredSession> resumed) {
  encoder_ = std::make_unique<SessionEncoder>(MqttEncoder::instance(version_), subscribing_, resuming_);
  set_encoder(*encoder_);
  client_max_packet_ = c.properties.maximum_packet_size;
  session_expiry_zero_ = c.properties.session_expiry == 0;
  // 3.1.1: Clean Session 0 keeps the session for ever (3.1.2.4).
  session_expiry_s_ = version_ == Version::V5 ? c.properties.session_expiry : c.clean_start ? 0 : UINT32_MAX;
  // 3.1.1 has no Receive Maximum: the window's own cap applies.
  outbound_alias_max_ = version_ == Version::V5 ? std::min(c.properties.topic_alias_maximum, kOutboundAliasMaximum) : 0;
  update_rewrites();
  outbound_.set_limits(version_ == Version::V5 ? c.properties.receive_maximum : UINT16_MAX,
                       env().config.limits.max_output_buffer);
  has_will_ = c.has_will;
  will_topic_.assign(broker_topic(c.will.topic, topic_scratch_));  // "" if it cannot be: refused as it is published
  will_payload_.assign(c.will.payload.begin(), c.will.payload.end());
  will_retain_ = c.will.retain;
  will_qos_ = c.will.qos;
  // Its properties go with it (the expiry counts from its publication); the
  // raw block is kept, since CONNECT's bytes are gone by then.
  will_properties_.assign(c.will.properties.raw.begin(), c.will.properties.raw.end());
  will_expiry_s_ = c.will.properties.message_expiry;
  will_delay_s_ = c.has_will ? c.will.properties.will_delay : 0;
  Connack connack;
  const uint16_t keepalive_s = keepalive_for(c, connack.server_keep_alive);
  // Keep Alive: the connection closes after one and a half times it without a packet (3.1.2.10).
  open(identity_.client_id, keepalive_s ? keepalive_s * 1'500'000'000ull : kNoTimeout);
  if (assigned) connack.assigned_client_id = identity_.client_id;
  connack.receive_maximum = kReceiveMaximum;
  connack.maximum_packet_size = env().config.limits.max_frame;
  connack.topic_alias_maximum = kTopicAliasMaximum;
  connack.shared_subscriptions = true;
  connack.subscription_ids = true;
  connack.session_present = resumed.has_value();
  queue_packet(kConnackMax, [&](std::span<uint8_t> out) { return encode_connack(out, version_, connack); });
  connacked_ = true;
  settle_pending_will(resumed.has_value());
  // A resumed session's queue serves this connection even when the session now ends with it (Session Expiry 0).
  queue_backed_ = env().spool != nullptr && (session_expiry_s_ != 0 || resumed.has_value());
  // A new session starts with an empty queue (one ending with its connection drops it in persist_session);
  // a resumed one's attracts its subscriptions before they go live.
  if (queue_backed_ && !resumed) env().spool->mqtt_queue(session_queue_name(key_), {}, true);
  if (queue_backed_) update_queue(queue_patterns(resumed ? resumed->subscriptions : std::vector<StoredSession::Subscription>{}));
  if (resumed) resume(*resumed);
  persist_session();
  if (queue_backed_) {
    env().spool->bind_mqtt(port(), kQueueBind, std::min<uint32_t>(outbound_.limit(), OutboundWindow::kMaxInflight),
                           session_queue_name(key_));
  }
  TW_DEBUG("session %s: MQTT %s CONNECT from '%s', keepalive %u s", peer().c_str(),
           version_ == Version::V5 ? "5.0" : "3.1.1", identity_.client_id.c_str(), c.keepalive_s);
}

// mqtt_max_keepalive_s caps an MQTT 5 client's keep-alive, none (0) included,
// and CONNACK says so (Server Keep Alive, 3.2.2.3.14); a 3.1.1 client cannot
// be told, and keeps its own (a cap it does not know of would close it).
uint16_t MqttSession::keepalive_for(const Connect& c, uint16_t& server_keep_alive) const {
  const uint32_t cap = env().config.mqtt_max_keepalive_s;
  if (version_ != Version::V5 || cap == 0 || (c.keepalive_s != 0 && c.keepalive_s <= cap)) return c.keepalive_s;
  server_keep_alive = static_cast<uint16_t>(cap);
  return server_keep_alive;
}

void MqttSession::handle_disconnect(const Packet& packet) {
  Disconnect msg;
  if (auto f = decode_disconnect(packet, version_, msg); !f.ok()) return refuse(f.reason, f.text);
  if (session_expiry_zero_ && msg.properties.session_expiry != 0) {
    return refuse(Reason::ProtocolError, "DISCONNECT sets a Session Expiry after CONNECT's 0");  // [MQTT-3.14.2-2]
  }
  if (msg.properties.has_session_expiry) session_expiry_s_ = msg.properties.session_expiry;
  graceful_ = msg.reason != Reason::DisconnectWithWill;  // [MQTT-3.14.4-3]
  fail(wire::Code::Ok, "client sent DISCONNECT");
}

size_t MqttSession::encode_goodbye(std::span<uint8_t> out, wire::Code code, std::string_view text) {
  // No DISCONNECT before a successful CONNACK, and none in 3.1.1.
  if (!connacked_) return 0;
  const Reason reason = close_reason_ != Reason::Success ? close_reason_ : reason_for(code);
  return encode_disconnect(out, version_, reason, text);
}

// A connection that ends without DISCONNECT (or with "disconnect with Will")
// publishes its Will (3.1.2.5), if its user may still publish it now: not
// when a reload removed the user (and so closed the connection) or revoked
// the topic (identity.cc); with a Will Delay Interval, only once that or the
// session's expiry ends, whichever is first (pending_wills.h). A session that
// outlives it is stored.
void MqttSession::on_finish() {
  leave_fence();
  if (has_will_ && !graceful_ && connacked_ && delay_will()) has_will_ = false;
  // A CONNECT with Clean Start 1 that took this connection over ended the
  // session: a Will left to its delay goes now, unless that CONNECT found it first.
  if (store_session() == ClientRegistry::Ended::Over) settle_pending_will(false);
  if (!has_will_ || graceful_ || !connacked_) return;
  has_will_ = false;
  publish_will();
}

// Left pending before the session is stored or handed over, so that a
// successor that resumes it finds the Will there to cancel.
bool MqttSession::delay_will() {
  const uint32_t delay_s = std::min(will_delay_s_, session_expiry_s_);
  if (delay_s == 0) return false;  // no delay, or the session ends with the connection: at once
  PendingWill will{will_topic_, will_payload_, will_retain_, will_qos_, will_properties_, will_expiry_s_,
                   grants() != nullptr ? env().authority->refresh(*grants()) : nullptr,
                   monotonic_ns() + delay_s * 1'000'000'000ull};
  if (grants() != nullptr && will.grants == nullptr) return false;  // the user is gone: publish_will() refuses it
  if (!server_.wills.add(key_, std::move(will))) return false;
  TW_DEBUG("session %s: Will to %s delayed %u s", peer().c_str(), will_topic_.c_str(), delay_s);
  return true;
}

void MqttSession::publish_will() {
  if (!will_permitted()) {
    TW_DEBUG("session %s: Will to %s not published: its user may no longer publish it", peer().c_str(),
             will_topic_.c_str());
    return;
  }
  Properties properties;
  properties.raw = will_properties_;
  properties.message_expiry = will_expiry_s_;
  const Reason result =
      publish_to_channel(will_topic_, will_payload_, will_retain_, forwarded_properties(properties, will_qos_));
  TW_DEBUG("session %s: Will published to %s: %s", peer().c_str(), will_topic_.c_str(), reason_name(result));
}

void MqttSession::settle_pending_will(bool resumed) {
  std::optional<PendingWill> pending = server_.wills.take(key_);
  if (!pending) return;
  if (resumed) {
    TW_DEBUG("session %s: '%s' resumed: its delayed Will is not published", peer().c_str(), identity_.client_id.c_str());
    return;
  }
  const Reason result = mqtt::publish_will(env(), *pending);
  TW_DEBUG("session %s: '%s' began a new session: the old one's Will published to %s: %s", peer().c_str(),
           identity_.client_id.c_str(), pending->topic.c_str(), reason_name(result));
}

}  // namespace tw::mqtt
