// A stored session's queue on the store (docs/mqtt.md, "Sessions";
// docs/ARCHITECTURE.md, "MQTT on the store"). With `store.dir`, a session
// that outlives its connection has a durable queue (queue::Spool,
// `<store.dir>/mqtt-sessions/<name>.q`, exclusive) that attracts the broker
// patterns of its QoS 1 and 2 subscriptions, as Solace's MQTT persistent
// sessions are queues. Every QoS 1 or 2 PUBLISH an MQTT client makes goes to
// the store (publish.cc), marked so in its forwarded properties
// (kForwardedStored): such a message reaches the session from its queue only,
// never live, whether it is connected or away, so there is no seam between a
// queue drained on resume and live delivery where a message could be lost or
// sent twice. The queue delivers within the session's in-flight window; a
// message leaves it at PUBACK (QoS 1) or PUBREC (QoS 2). Messages of native
// publishers and QoS 0 ones are live only, as without a store.
#include <algorithm>

#include "base/clock.h"
#include "base/log.h"
#include "mqtt/mqtt_session.h"
#include "mqtt/session_file.h"
#include "queue/spool.h"
#include "topic/topic.h"
#include "tickwire/wire/codec.h"
#include "tickwire/wire/guaranteed.h"

namespace tw::mqtt {

std::vector<StoredSession::Subscription> MqttSession::stored_subscriptions() const {
  std::vector<StoredSession::Subscription> subs;
  for (const Subscription& s : subscriptions_) {
    subs.push_back({s.filter, s.retain_handling, s.qos, s.id, s.no_local, s.retain_as_published});
  }
  return subs;
}

std::vector<std::string> MqttSession::queue_patterns(const std::vector<StoredSession::Subscription>& subs) {
  std::vector<std::string> patterns;
  for (const StoredSession::Subscription& s : subs) {
    Patterns mapped;
    if (s.qos == 0 || is_shared_filter(s.filter) || check_filter(s.filter, mapped) != Reason::Success) continue;
    for (size_t i = 0; i < mapped.count; ++i) {
      if (std::find(patterns.begin(), patterns.end(), mapped.pattern[i]) == patterns.end()) {
        patterns.push_back(mapped.pattern[i]);
      }
    }
  }
  return patterns;
}

void MqttSession::update_queue(std::vector<std::string> patterns, uint64_t expires_ns) {
  if (env().spool == nullptr) return;
  env().spool->mqtt_queue(session_queue_name(key_), std::move(patterns), false, expires_ns);
}

bool MqttSession::from_queue(const cache::Channel& channel) const {
  if (!queue_backed_ || !forwarded_stored(channel.attributes)) return false;
  return std::any_of(subscriptions_.begin(), subscriptions_.end(),
                     [&](const Subscription& s) { return s.qos > 0 && s.share == nullptr && applies(s, channel); });
}

bool MqttSession::send_queued(std::span<const uint8_t> bytes) {
  wire::Frame frame;
  wire::Deliver d;
  if (wire::split_frame(bytes, UINT32_MAX, frame) != wire::SplitResult::Frame || !wire::decode(frame, d)) return true;
  auto done = [&] { env().spool->ack(port(), kQueueBind, d.seq, false); };
  QueuedMessage m;
  if (!decode_queued(d.payload, m)) {
    done();  // not an MQTT record: nothing to send
    return true;
  }
  const uint64_t now = monotonic_ns();
  const uint64_t wall = realtime_ns();
  if (m.expires_at_ns != 0 && m.expires_at_ns <= wall) {
    done();  // its Message Expiry Interval passed while it was queued [MQTT-3.3.2-5]
    return true;
  }
  // As live: the highest QoS granted among the subscriptions that match, at most the published one.
  uint8_t granted = 0;
  ids_scratch_.clear();
  for (const Subscription& s : subscriptions_) {
    if (s.share != nullptr) continue;
    for (size_t i = 0; i < s.patterns.count; ++i) {
      if (!topic::matches(s.patterns.pattern[i], d.topic)) continue;
      granted = std::max(granted, s.qos);
      if (s.id != 0) ids_scratch_.push_back(s.id);
      break;
    }
  }
  const uint8_t qos = std::min(granted, m.qos);
  if (qos > 0 && outbound_.full()) return false;
  const uint64_t deadline = m.expires_at_ns == 0 ? 0 : now + (m.expires_at_ns - wall);
  std::vector<uint8_t> forwarded(kForwardedHead);
  std::copy_n(reinterpret_cast<const uint8_t*>(&deadline), sizeof deadline, forwarded.begin());
  forwarded[kForwardedHead - 1] = m.qos;
  forwarded.insert(forwarded.end(), m.properties.begin(), m.properties.end());
  // The QoS 0 encoding every PUBLISH of the session is rewritten from (reliable.cc).
  std::vector<uint8_t> qos0(publish_header_size(version_, d.topic, 0, m.payload.size(), forwarded) + m.payload.size());
  const size_t head = encode_publish_header(qos0, version_, d.topic, 0, false, 0, m.payload.size(), forwarded, now);
  if (head == 0) {
    done();
    return true;
  }
  std::copy(m.payload.begin(), m.payload.end(), qos0.begin() + head);
  qos0.resize(head + m.payload.size());
  PublishRewrite r;
  r.qos = qos;
  if (version_ == Version::V5) r.subscription_ids = ids_scratch_;
  if (!fits(rewritten_publish_max(qos0.size(), r))) {
    done();  // over the client's Maximum Packet Size: dropped, as live
    return true;
  }
  if (qos == 0) {
    queue_rewritten(qos0, r);
    done();
    return true;
  }
  const auto kept = outbound_.add(qos0, version_, r, deadline);
  if (kept.empty()) return false;
  queued_ids_[r.packet_id] = d.seq;
  output().queue_ref(kept);
  return true;
}

void MqttSession::send_waiting_queued() {
  while (!queued_waiting_.empty() && !closing() && send_queued(queued_waiting_.front())) queued_waiting_.pop_front();
}

void MqttSession::queued_acknowledged(uint16_t packet_id) {
  auto it = queued_ids_.find(packet_id);
  if (it == queued_ids_.end()) return;
  env().spool->ack(port(), kQueueBind, it->second, false);
  queued_ids_.erase(it);
}

}  // namespace tw::mqtt
