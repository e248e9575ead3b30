// The entitlement seam. Every decision about what an MQTT client may do
// passes through permitted(): connecting (with identity_'s client id, user
// name and password), publishing to a topic and subscribing to a filter.
// Users and entitlements (issue 13, src/auth) plug in here; until then
// every client may do everything, as native clients may.
#include "mqtt/mqtt_session.h"

namespace tw::mqtt {

bool MqttSession::permitted(Access, std::string_view) const { return true; }

}  // namespace tw::mqtt
