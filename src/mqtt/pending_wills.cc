#include "mqtt/pending_wills.h"

#include "base/clock.h"
#include "base/log.h"
#include "tickwire/wire/protocol.h"

namespace tw::mqtt {

bool PendingWills::add(const ClientKey& key, PendingWill will) {
  std::lock_guard lock(mutex_);
  if (wills_.size() >= kMaxPending && !wills_.contains(key)) return false;
  wills_.insert_or_assign(key, std::move(will));
  update_next_due_locked();
  return true;
}

std::optional<PendingWill> PendingWills::take(const ClientKey& key) {
  if (next_due_ns_.load(std::memory_order_relaxed) == UINT64_MAX) return std::nullopt;  // none held
  std::lock_guard lock(mutex_);
  auto it = wills_.find(key);
  if (it == wills_.end()) return std::nullopt;
  PendingWill will = std::move(it->second);
  wills_.erase(it);
  update_next_due_locked();
  return will;
}

std::vector<PendingWill> PendingWills::take_due(uint64_t now_ns) {
  std::vector<PendingWill> due;
  std::lock_guard lock(mutex_);
  for (auto it = wills_.begin(); it != wills_.end();) {
    if (it->second.due_ns > now_ns) {
      ++it;
      continue;
    }
    due.push_back(std::move(it->second));
    it = wills_.erase(it);
  }
  update_next_due_locked();
  return due;
}

void PendingWills::update_next_due_locked() {
  uint64_t next = UINT64_MAX;
  for (const auto& [key, will] : wills_) next = std::min(next, will.due_ns);
  next_due_ns_.store(next, std::memory_order_relaxed);
}

Reason publish_will(const session::Session::Env& env, const PendingWill& will) {
  if (will.grants != nullptr) {
    const std::shared_ptr<const auth::Grants> now = env.authority->refresh(*will.grants);
    if (now == nullptr || now->publish(will.topic) != wire::Code::Ok) {
      ++env.counters.entitlement_refusals;
      return Reason::NotAuthorized;
    }
  }
  if (will.payload.size() + wire::kImageFixedSize + will.topic.size() > env.config.limits.max_frame) {
    return Reason::PacketTooLarge;
  }
  Properties properties;
  properties.raw = will.properties;
  properties.message_expiry = will.expiry_s;
  std::vector<uint8_t> forwarded(forwards_nothing(properties, will.qos) ? 0 : forwarded_max(properties));
  forwarded.resize(encode_forwarded(forwarded, properties, monotonic_ns(), will.qos));
  cache::ChannelId id = 0;
  if (!env.router.advertise(will.topic, wire::PayloadKind::Opaque, id).ok()) return Reason::TopicNameInvalid;
  // No connection publishes it: nobody's No Local applies (MQTT 5 3.8.3.1).
  const broker::MessageOrigin origin{nullptr, 0, 0, will.retain, !will.retain, forwarded};
  const broker::Outcome outcome = env.router.publish(id, will.payload, /*image=*/true, fields::Checked::No, origin);
  return outcome.ok() ? Reason::Success : Reason::ImplementationSpecificError;
}

void publish_due_wills(PendingWills& wills, const session::Session::Env& env, uint64_t now_ns) {
  if (!wills.any_due(now_ns)) return;
  for (const PendingWill& will : wills.take_due(now_ns)) {
    const Reason result = publish_will(env, will);
    TW_DEBUG("delayed Will published to %s: %s", will.topic.c_str(), reason_name(result));
  }
}

}  // namespace tw::mqtt
