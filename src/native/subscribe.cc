// SUBSCRIBE, UNSUBSCRIBE and SNAPSHOT (docs/protocol.md, "Subscriptions").
#include "native/native_session.h"
#include "wire/utf8.h"
#include "topic/topic.h"

namespace tw::native {

void NativeSession::handle_subscribe(const wire::Frame& frame, bool subscribe) {
  wire::Subscribe msg;
  if (!wire::decode(frame, msg)) {
    return reject(wire::Code::MalformedFrame, subscribe ? "malformed SUBSCRIBE" : "malformed UNSUBSCRIBE");
  }
  if (!wire::valid_text(msg)) return reject(wire::Code::InvalidUtf8, "pattern is not valid UTF-8");
  if (!subscribe) return send_ack(msg.request_id, env().router.unsubscribe(this, msg.pattern));
  // Entitlements are asked of valid patterns only; the router refuses the others with INVALID_TOPIC.
  if (grants() && topic::validate_pattern(msg.pattern, topic_limits()) == topic::Error::Ok) {
    const auth::SubscribeVerdict verdict = grants()->subscribe(msg.pattern, msg.delay_ms);
    if (!verdict.ok()) {
      ++env().counters.entitlement_refusals;
      return send_ack(msg.request_id, {verdict.code, verdict.detail});
    }
    msg.delay_ms = verdict.delay_ms;  // delayed-only entitlements force their delay
  }
  // The ACK goes first: the images that follow belong to an accepted subscription.
  broker::Outcome check = env().router.check_subscribe(this, msg.pattern, msg.delay_ms);
  send_ack(msg.request_id, check);
  if (check.code == wire::Code::TooManySubscriptions) {
    ++env().counters.subscription_limit_hits;
    return reject(check.code, check.detail);
  }
  if (!check.ok()) return;
  count_subscription();
  env().router.subscribe(this, msg.pattern, msg.policy, msg.conflate_ms, msg.delay_ms);
  settle({&msg.pattern, 1});
}

void NativeSession::handle_snapshot(const wire::Frame& frame) {
  wire::Snapshot msg;
  if (!wire::decode(frame, msg)) return reject(wire::Code::MalformedFrame, "malformed SNAPSHOT");
  if (!wire::valid_text(msg)) return reject(wire::Code::InvalidUtf8, "SNAPSHOT topic is not valid UTF-8");
  // A snapshot is the live image: only for users entitled to the topic in real time.
  if (grants() && topic::validate_topic(msg.topic, topic_limits()) == topic::Error::Ok &&
      !grants()->receives(msg.topic, 0)) {
    ++env().counters.entitlement_refusals;
    return send_ack(msg.request_id, {wire::Code::NotAuthorized, "not entitled to this topic in real time"});
  }
  send_ack(msg.request_id, env().router.snapshot(this, msg.topic, msg.request_id));
}

}  // namespace tw::native
