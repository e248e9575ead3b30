// The entitlement seam. Every decision about what an MQTT client may do
// passes through here, with the grants of its user (src/auth; docs/security.md):
// none when authentication is off, and then everything is allowed, as for
// native clients. Publishing is decided per topic (MQTT topics are native
// topics), subscribing per native pattern a filter maps to; a user entitled
// to a topic only with a delay is refused it (MQTT has no delayed
// subscriptions). Wildcard subscriptions receive only the channels the user
// is entitled to (Session::entitled, asked by the router).
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

}  // namespace tw::mqtt
