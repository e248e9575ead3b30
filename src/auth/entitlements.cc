#include "auth/entitlements.h"

#include <algorithm>

#include "topic/topic.h"

namespace tw::auth {

namespace {

constexpr uint8_t kAnySubscribe = kSubscribe | kSubscribeDelayed;

// The broker's statistics topics (docs/mqtt.md, "$SYS"): its own, never a client's.
bool is_sys(std::string_view topic) { return topic == "$SYS" || topic.starts_with("$SYS/"); }

}  // namespace

Grants::Grants(std::string user, bool admin, const std::vector<const Rule*>& rules,
               std::shared_ptr<const ServiceSpace> services, uint32_t max_channels)
    : user_(std::move(user)), admin_(admin), max_channels_(max_channels), services_(std::move(services)) {
  for (const Rule* rule : rules) {
    const Entry entry{rule->allow, rule->permissions, rule->delay_ms};
    for (const std::string& pattern : rule->patterns) {
      (pattern.starts_with('$') ? dollar_index_ : index_).insert(pattern, entry);
    }
  }
}

Grants::Match Grants::match(std::string_view topic) const {
  Match m;
  index_of(topic).match(topic, [&](const Entry& e) {
    if (!e.allow) {
      m.denied |= e.permissions;
      return;
    }
    m.allowed |= e.permissions;
    if (e.permissions & kSubscribeDelayed) m.delayed_ms = std::min(m.delayed_ms, e.delay_ms);
  });
  return m;
}

bool Grants::receives(std::string_view topic, uint32_t delay_ms) const {
  if (admin_ && is_sys(topic)) return true;
  const Match m = match(topic);
  if (m.denied & kSubscribe) return false;  // deny subscribe covers delayed data too
  if (m.allowed & kSubscribe) return true;
  if (m.denied & kSubscribeDelayed) return false;
  return (m.allowed & kSubscribeDelayed) && delay_ms >= m.delayed_ms;
}

SubscribeVerdict Grants::subscribe(std::string_view pattern, uint32_t delay_ms) const {
  if (admin_ && is_sys(pattern)) return {wire::Code::Ok, "", delay_ms};
  if (!topic::is_wildcard(pattern)) {
    const Match m = match(pattern);
    if (m.denied & kSubscribe || !(m.allowed & kAnySubscribe)) {
      return {wire::Code::NotAuthorized, "not entitled to subscribe to this topic", 0};
    }
    if (!(m.allowed & kSubscribe)) {
      if (m.denied & kSubscribeDelayed) return {wire::Code::NotAuthorized, "not entitled to this topic", 0};
      delay_ms = std::max(delay_ms, m.delayed_ms);
    }
    return {wire::Code::Ok, "", delay_ms};
  }
  bool denied = false, realtime = false, any = false;
  uint32_t forced = 0;
  index_of(pattern).overlapping(pattern, [&](const Entry& e, bool covering) {
    if (!e.allow) {
      denied |= (e.permissions & kSubscribe) && covering;
      return;
    }
    if (!(e.permissions & kAnySubscribe)) return;
    any = true;
    if (e.permissions & kSubscribe) {
      realtime = true;
    } else {
      forced = std::max(forced, e.delay_ms);
    }
  });
  if (denied || !any) return {wire::Code::NotAuthorized, "not entitled to any topic of this pattern", 0};
  // Channels under delayed-only rules attach only to a delay that satisfies them (receives()).
  return {wire::Code::Ok, "", realtime ? delay_ms : std::max(delay_ms, forced)};
}

bool Grants::subscribes_wholly(std::string_view pattern) const {
  if (!topic::is_wildcard(pattern)) {
    const Match m = match(pattern);
    return (m.allowed & kSubscribe) && !(m.denied & kSubscribe);
  }
  bool denied = false, covered = false;
  index_of(pattern).overlapping(pattern, [&](const Entry& e, bool covering) {
    if (!(e.permissions & kSubscribe)) return;
    if (e.allow) {
      covered |= covering;
    } else {
      denied = true;
    }
  });
  return covered && !denied;
}

wire::Code Grants::publish(std::string_view topic) const {
  if (is_sys(topic)) return wire::Code::NotAuthorized;
  const Match m = match(topic);
  const bool service_topic = std::any_of(services_->begin(), services_->end(),
                                         [&](const std::string& p) { return topic::matches(p, topic); });
  if (service_topic) return (m.allowed & kProvide) && !(m.denied & kProvide) ? wire::Code::Ok : wire::Code::NotProvider;
  return (m.allowed & kPublish) && !(m.denied & kPublish) ? wire::Code::Ok : wire::Code::NotAuthorized;
}

bool Grants::consumes(std::string_view queue) const {
  const Match m = match(queue);
  return (m.allowed & kConsume) && !(m.denied & kConsume);
}

wire::Code Grants::provide(std::string_view service, std::string_view pattern) const {
  const std::string whole = pattern.empty() ? std::string(service) + "/>" : std::string(pattern);
  bool denied = false, allowed = false;
  index_.overlapping(whole, [&](const Entry& e, bool covering) {
    if (!(e.permissions & kProvide)) return;
    denied |= !e.allow;
    allowed |= e.allow && covering;
  });
  return allowed && !denied ? wire::Code::Ok : wire::Code::NotAuthorized;
}

}  // namespace tw::auth
