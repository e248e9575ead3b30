// Sessions that outlive their connection (3.1.2.4, 3.1.2.11.2, 4.1): a
// Session Expiry Interval above 0 (MQTT 5) or Clean Session 0 (3.1.1) keeps
// the session's subscriptions and its unreleased QoS 2 packet ids in the
// ClientRegistry; a CONNECT with the same client id and Clean Start 0
// resumes them (CONNACK Session Present 1): the QoS 1 and 2 messages it was
// sent and did not acknowledge are sent again, with DUP, and the
// subscriptions send their retained images again: what was published while
// no connection held the session is not queued, but every channel's latest
// value arrives. A connection that takes over a live one with Clean Start 0
// gets that one's session the same way, handed over as it ends.
#include "base/clock.h"
#include "base/log.h"
#include "mqtt/mqtt_session.h"

namespace tw::mqtt {

std::optional<StoredSession> MqttSession::take_stored_session(const Connect& c) {
  auto stored = ClientRegistry::instance().take(identity_.client_id, monotonic_ns());
  if (c.clean_start) return std::nullopt;  // Clean Start discards any stored session (3.1.2.4)
  return stored;
}

void MqttSession::resume(StoredSession& state) {
  awaiting_pubrel_ = state.awaiting_pubrel;
  redeliver(std::move(state.outbound));  // before anything new [MQTT-4.4.0-1]
  for (const StoredSession::Subscription& s : state.subscriptions) {
    Patterns mapped;
    if (check_filter(s.filter, mapped) != Reason::Success) continue;  // e.g. over a limit lowered since
    TopicFilter filter;
    filter.filter = s.filter;
    filter.retain_handling = s.retain_handling;
    filter.qos = s.qos;
    filter.no_local = s.no_local;
    filter.retain_as_published = s.retain_as_published;
    add_subscription(filter, mapped, s.id);
  }
  TW_DEBUG("session %s: resumed '%s' with %zu subscriptions", peer().c_str(), identity_.client_id.c_str(),
           state.subscriptions.size());
}

// A connection taken over hands its session to its successor (which waits
// for it when it asked to continue the session), even one that would end
// with the connection: it has none to give then, and the successor need not
// wait longer.
void MqttSession::store_session() {
  if (!connacked_) return;
  const bool taken_over = taken_over_.load(std::memory_order_relaxed);
  if (session_expiry_s_ == 0) {
    if (taken_over) ClientRegistry::instance().hand_over(identity_.client_id, std::nullopt, monotonic_ns());
    return;
  }
  StoredSession state;
  for (const Subscription& s : subscriptions_) state.subscriptions.push_back({s.filter, s.retain_handling, s.qos, s.id, s.no_local, s.retain_as_published});
  state.awaiting_pubrel = awaiting_pubrel_;
  state.outbound = outbound_.take();
  const uint64_t now = monotonic_ns();
  state.expires_ns = session_expiry_s_ == UINT32_MAX ? UINT64_MAX : now + session_expiry_s_ * 1'000'000'000ull;
  if (taken_over) return ClientRegistry::instance().hand_over(identity_.client_id, std::move(state), now);
  if (!ClientRegistry::instance().store(identity_.client_id, std::move(state), now)) {
    TW_WARN("session %s: '%s' not kept: %zu sessions are stored already", peer().c_str(),
            identity_.client_id.c_str(), ClientRegistry::kMaxStored);
  }
}

}  // namespace tw::mqtt
