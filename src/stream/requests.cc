// subscribe and unsubscribe: the native protocol's rules (src/native/subscribe.cc),
// as a browser asks for them. Entitlements are asked of valid patterns
// only (the router refuses the others with INVALID_TOPIC); /stream is real
// time, so a user entitled only to delayed data is refused, as over MQTT.
#include "stream/json_encoder.h"
#include "stream/reply.h"
#include "stream/stream_session.h"
#include "topic/topic.h"

namespace tw::stream {

void StreamSession::subscribe(const Request& request) {
  const topic::Limits limits{env().config.limits.max_topic_length, env().config.limits.max_topic_depth};
  if (grants() && topic::validate_pattern(request.topic, limits) == topic::Error::Ok) {
    const auth::SubscribeVerdict verdict = grants()->subscribe(request.topic, 0);
    if (!verdict.ok() || verdict.delay_ms != 0) {
      ++env().counters.entitlement_refusals;
      return answer(request, verdict.ok() ? wire::Code::NotAuthorized : verdict.code,
                    verdict.ok() ? "only delayed data is permitted, and /stream is real time" : verdict.detail);
    }
  }
  // The ACK goes first: the images that follow belong to an accepted subscription.
  const broker::Outcome check = env().router.check_subscribe(this, request.topic);
  answer(request, check.code, check.detail);
  if (check.code == wire::Code::TooManySubscriptions) ++env().counters.subscription_limit_hits;
  if (!check.ok()) return;
  count_subscription();
  env().router.subscribe(this, request.topic, request.policy, request.conflate_ms);
  const std::string_view pattern = request.topic;
  settle({&pattern, 1});
}

void StreamSession::unsubscribe(const Request& request) {
  const broker::Outcome outcome = env().router.unsubscribe(this, request.topic);
  answer(request, outcome.code, outcome.detail);
}

void StreamSession::answer(const Request& request, wire::Code code, std::string_view text) {
  const std::string json = ack_json(request, code, text);
  output().queue(text_message_max(json.size()), [&](std::span<uint8_t> out) { return encode_text_message(out, json); });
}

}  // namespace tw::stream
