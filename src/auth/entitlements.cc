#include "auth/entitlements.h"

#include <algorithm>

#include "topic/topic.h"

namespace tw::auth {

namespace {

// Splits off the first level of `rest`; false when nothing is left.
bool next_level(std::string_view& rest, std::string_view& level, bool& ended) {
  if (ended) return false;
  size_t slash = rest.find('/');
  level = rest.substr(0, slash);
  if (slash == std::string_view::npos) {
    ended = true;
    rest = {};
  } else {
    rest.remove_prefix(slash + 1);
  }
  return true;
}

constexpr uint8_t kAnySubscribe = kSubscribe | kSubscribeDelayed;

}  // namespace

bool overlaps(std::string_view a, std::string_view b) {
  bool a_end = false, b_end = false;
  std::string_view la, lb;
  for (;;) {
    const bool has_a = next_level(a, la, a_end), has_b = next_level(b, lb, b_end);
    if (!has_a || !has_b) return has_a == has_b;
    if (la == ">" || lb == ">") return true;  // '>' takes one or more levels: the other has one here
    if (la != "*" && lb != "*" && la != lb) return false;
  }
}

bool covers(std::string_view outer, std::string_view inner) {
  bool o_end = false, i_end = false;
  std::string_view lo, li;
  for (;;) {
    const bool has_o = next_level(outer, lo, o_end), has_i = next_level(inner, li, i_end);
    if (!has_o || !has_i) return has_o == has_i;
    if (lo == ">") return true;
    if (li == ">") return false;  // only '>' covers '>'
    if (lo == "*") continue;
    if (li == "*" || lo != li) return false;
  }
}

Grants::Grants(std::string user, bool admin, const std::vector<const Rule*>& rules,
               std::shared_ptr<const ServiceSpace> services)
    : user_(std::move(user)), admin_(admin), services_(std::move(services)) {
  for (const Rule* rule : rules) {
    const Entry entry{rule->allow, rule->permissions, rule->delay_ms};
    for (const std::string& pattern : rule->patterns) {
      index_.insert(pattern, entry);
      list_.emplace_back(pattern, entry);
    }
  }
}

Grants::Match Grants::match(std::string_view topic) const {
  Match m;
  index_.match(topic, [&](const Entry& e) {
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
  const Match m = match(topic);
  if (m.denied & kSubscribe) return false;  // deny subscribe covers delayed data too
  if (m.allowed & kSubscribe) return true;
  if (m.denied & kSubscribeDelayed) return false;
  return (m.allowed & kSubscribeDelayed) && delay_ms >= m.delayed_ms;
}

SubscribeVerdict Grants::subscribe(std::string_view pattern, uint32_t delay_ms) const {
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
  bool realtime = false, any = false;
  uint32_t forced = 0;
  for (const auto& [rule_pattern, e] : list_) {
    if (!e.allow && (e.permissions & kSubscribe) && covers(rule_pattern, pattern)) {
      return {wire::Code::NotAuthorized, "not entitled to any topic of this pattern", 0};
    }
    if (!e.allow || !(e.permissions & kAnySubscribe) || !overlaps(rule_pattern, pattern)) continue;
    any = true;
    if (e.permissions & kSubscribe) {
      realtime = true;
    } else {
      forced = std::max(forced, e.delay_ms);
    }
  }
  if (!any) return {wire::Code::NotAuthorized, "not entitled to any topic of this pattern", 0};
  // Channels under delayed-only rules attach only to a delay that satisfies them (receives()).
  return {wire::Code::Ok, "", realtime ? delay_ms : std::max(delay_ms, forced)};
}

wire::Code Grants::publish(std::string_view topic) const {
  const Match m = match(topic);
  const bool service_topic = std::any_of(services_->begin(), services_->end(),
                                         [&](const std::string& p) { return topic::matches(p, topic); });
  if (service_topic) return (m.allowed & kProvide) && !(m.denied & kProvide) ? wire::Code::Ok : wire::Code::NotProvider;
  return (m.allowed & kPublish) && !(m.denied & kPublish) ? wire::Code::Ok : wire::Code::NotAuthorized;
}

wire::Code Grants::provide(std::string_view service, std::string_view pattern) const {
  const std::string whole = pattern.empty() ? std::string(service) + "/>" : std::string(pattern);
  bool allowed = false;
  for (const auto& [rule_pattern, e] : list_) {
    if (!(e.permissions & kProvide)) continue;
    if (!e.allow && overlaps(rule_pattern, whole)) return wire::Code::NotAuthorized;
    if (e.allow && covers(rule_pattern, whole)) allowed = true;
  }
  return allowed ? wire::Code::Ok : wire::Code::NotAuthorized;
}

}  // namespace tw::auth
