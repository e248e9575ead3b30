// Sessions that outlive their connection (3.1.2.4, 3.1.2.11.2, 4.1): a
// Session Expiry Interval above 0 (MQTT 5) or Clean Session 0 (3.1.1) keeps
// the session's subscriptions and its unreleased QoS 2 packet ids in the
// ClientRegistry; a CONNECT by the same user with the same client id and
// Clean Start 0 resumes them (CONNACK Session Present 1): the QoS 1 and 2
// messages it was sent and did not acknowledge are sent again, with DUP,
// those of topics the user may still receive live only. What was published
// while no connection held the session is not queued; instead the resumed
// subscriptions send the latest value of each channel that has a message the
// session has not had (its sequence number differs from the one the session
// last saw of it, or the session never saw the channel), and nothing for the
// others: no retained message again [MQTT-3.3.1-6: only a new subscription
// gets those], nor a duplicate of a message resent above. A connection that
// takes over a live one with Clean Start 0 gets that one's session the same
// way, handed over as it ends.
//
// With a store (`store.dir`) the stored sessions survive a restart of the
// broker (SIGTERM or SIGKILL): each is a file (session_file.h) written by the
// store thread when it starts, when its subscriptions change and when its
// connection ends, removed when it ends; the broker reads them at the first
// CONNECT. What is on disk is the session's user, client id, subscriptions and
// expiry; its unacknowledged messages and what it has seen of each channel
// are not (after a restart the catch-up sends every channel's last value).
#include "base/clock.h"
#include "base/log.h"
#include "mqtt/mqtt_session.h"
#include "mqtt/session_file.h"
#include "queue/spool.h"

namespace tw::mqtt {

void MqttSession::load_persisted_sessions() {
  if (env().spool == nullptr) return;
  std::call_once(server_.sessions_loaded, [&] {
    const uint64_t now = monotonic_ns();
    std::vector<ClientKey> expired;
    for (PersistedSession& p : load_sessions(sessions_dir(env().config.store.dir), realtime_ns(), &expired)) {
      const uint64_t left = remaining_ns(p, realtime_ns());
      StoredSession state;
      state.subscriptions = std::move(p.subscriptions);
      state.expires_ns = left == UINT64_MAX ? UINT64_MAX : now + left;
      // Its queue attracts its subscriptions again (the store thread opened it empty of them).
      env().spool->mqtt_queue(session_queue_name(p.key), queue_patterns(state.subscriptions),
                              false, left == UINT64_MAX ? 0 : realtime_ns() + left);
      (void)server_.clients.store(p.key, std::move(state), now);
    }
    for (const ClientKey& key : expired) env().spool->mqtt_queue(session_queue_name(key), {}, true);
  });
}

void MqttSession::persist_session(uint64_t ended_at_ns) {
  if (env().spool == nullptr) return;
  std::string path = sessions_dir(env().config.store.dir) + "/" + session_file_name(key_);
  if (session_expiry_s_ == 0) {
    env().spool->write_file(std::move(path), {});
    // The queue goes with the session: at once, or as the connection it still serves ends.
    if (!queue_backed_ || ended_at_ns != 0) env().spool->mqtt_queue(session_queue_name(key_), {}, true);
    return;
  }
  PersistedSession p{key_, session_expiry_s_, ended_at_ns, stored_subscriptions()};
  env().spool->write_file(std::move(path), encode_session(p));
  const bool expires = ended_at_ns != 0 && session_expiry_s_ != UINT32_MAX;
  update_queue(queue_patterns(p.subscriptions), expires ? ended_at_ns + session_expiry_s_ * 1'000'000'000ull : 0);
}

std::optional<StoredSession> MqttSession::take_stored_session(const Connect& c) {
  auto stored = server_.clients.take(key_, monotonic_ns());
  if (c.clean_start) return std::nullopt;  // Clean Start discards any stored session (3.1.2.4)
  return stored;
}

void MqttSession::resume(StoredSession& state) {
  awaiting_pubrel_ = state.awaiting_pubrel;
  seen_ = std::move(state.seen);
  drop_unentitled(state.outbound);
  redeliver(std::move(state.outbound));  // before anything new [MQTT-4.4.0-1]
  // What was published while away is not queued: each channel's last value
  // stands for it, a RETAIN 0 message included (not its retained message).
  resuming_ = true;
  // Held to the end: settle() reads the patterns as views.
  std::vector<Patterns> held;
  held.reserve(state.subscriptions.size());
  std::vector<std::string_view> patterns;
  for (const StoredSession::Subscription& s : state.subscriptions) {
    Patterns& mapped = held.emplace_back();
    if (check_filter(s.filter, mapped) != Reason::Success) continue;  // e.g. over a limit lowered since
    TopicFilter filter;
    filter.filter = s.filter;
    filter.retain_handling = s.retain_handling;
    filter.qos = s.qos;
    filter.no_local = s.no_local;
    filter.retain_as_published = s.retain_as_published;
    add_subscription(filter, mapped, s.id);
    for (size_t p = 0; p < mapped.count; ++p) patterns.push_back(mapped.pattern[p]);
  }
  // In thread tiers the images come later, from the gateways, before they settle.
  settle(patterns);
  resuming_ = unsettled();
  TW_DEBUG("session %s: resumed '%s' with %zu subscriptions", peer().c_str(), identity_.client_id.c_str(),
           state.subscriptions.size());
}

// The user's rights may have changed since a message was first sent (a
// reload revoked the topic, or left only a delayed grant): what it may no
// longer receive live is not resent, by the check SUBSCRIBE makes. A PUBREL
// is resent whatever the topic: its message was delivered already.
void MqttSession::drop_unentitled(std::vector<OutboundMessage>& messages) {
  std::erase_if(messages, [&](const OutboundMessage& m) {
    if (m.released) return false;
    std::string scratch;
    const std::string_view topic = broker_topic(publish_topic(m.packet), scratch);
    if (!topic.empty() && permitted(Access::Subscribe, topic)) return false;
    ++env().counters.entitlement_refusals;
    TW_DEBUG("session %s: not resending packet %u of '%s' to '%s': no longer entitled", peer().c_str(), m.packet_id,
             std::string(topic).c_str(), key_.user.c_str());
    return true;
  });
}

// A connection taken over hands its session to its successor (which waits
// for it when it asked to continue the session), even one that would end
// with the connection: it has none to give then, and the successor need not
// wait longer.
ClientRegistry::Ended MqttSession::store_session() {
  if (!connacked_) return ClientRegistry::Ended::Kept;
  // A successor writes its own file; a CONNECT that takes over after this
  // read finds the file and the stored state alike.
  if (!taken_over_.load(std::memory_order_relaxed)) persist_session(realtime_ns());
  const uint64_t now = monotonic_ns();
  std::optional<StoredSession> state;
  if (session_expiry_s_ != 0) {
    state.emplace();
    for (const Subscription& s : subscriptions_) state->subscriptions.push_back({s.filter, s.retain_handling, s.qos, s.id, s.no_local, s.retain_as_published});
    state->awaiting_pubrel = awaiting_pubrel_;
    state->outbound = outbound_.take();
    // Those its queue sent and were not acknowledged: the queue sends them again.
    std::erase_if(state->outbound, [&](const OutboundMessage& m) { return !m.released && queued_ids_.contains(m.packet_id); });
    state->seen = std::move(seen_);
    state->expires_ns = session_expiry_s_ == UINT32_MAX ? UINT64_MAX : now + session_expiry_s_ * 1'000'000'000ull;
  }
  return server_.clients.end(key_, &taken_over_, std::move(state), now);
}

}  // namespace tw::mqtt
