// The entitlement seam. Every decision about what an MQTT client may do
// passes through here, with the grants of its user (src/auth; docs/security.md):
// none when authentication is off, and then everything is allowed, as for
// native clients. Publishing is decided per topic (MQTT topics are native
// topics), subscribing per native pattern a filter maps to; a user entitled
// to a topic only with a delay is refused it (MQTT has no delayed
// subscriptions), and so is a stored message resent to a resumed session
// (session_state.cc). The Will is checked as it is published. Wildcard
// subscriptions receive only the channels the user is entitled to
// (Session::entitled, asked by the router).
#include "mqtt/mqtt_session.h"

namespace tw::mqtt {

bool MqttSession::permitted(Access access, std::string_view topic_or_pattern) const {
  const auth::Grants* g = grants();
  if (g == nullptr) return true;
  bool ok = true;
  switch (access) {
    case Access::Connect: return true;  // the login decided
    case Access::Publish: ok = g->publish(topic_or_pattern) == wire::Code::Ok; break;
    case Access::Subscribe: {
      const auth::SubscribeVerdict verdict = g->subscribe(topic_or_pattern, 0);
      ok = verdict.ok() && verdict.delay_ms == 0;
      break;
    }
  }
  if (!ok && access == Access::Publish) ++env().counters.entitlement_refusals;  // subscribe: per filter, by the caller
  return ok;
}

// The Will is published long after CONNECT, perhaps as a reload closes the
// connection: it is checked against the users file in force now, not the
// grants the connection holds (a removed user's are never replaced).
bool MqttSession::will_permitted() const {
  const auth::Grants* g = grants();
  if (g == nullptr) return true;
  const std::shared_ptr<const auth::Grants> now = env().authority->refresh(*g);
  const bool ok = now != nullptr && now->publish(will_topic_) == wire::Code::Ok;
  if (!ok) ++env().counters.entitlement_refusals;
  return ok;
}

}  // namespace tw::mqtt
