// REGISTER and PUBLISH (docs/protocol.md, "Publishing").
#include "base/log.h"
#include "native/native_session.h"
#include "wire/utf8.h"
#include "topic/topic.h"

namespace tw::native {

void NativeSession::handle_register(const wire::Frame& frame) {
  wire::Register msg;
  if (!wire::decode(frame, msg) || msg.publish_id == 0) return reject(wire::Code::MalformedFrame, "malformed REGISTER");
  if (!wire::valid_text(msg)) return reject(wire::Code::InvalidUtf8, "REGISTER topic is not valid UTF-8");
  if (msg.publish_id >= wire::kStreamIdBit) {
    return reject(wire::Code::MalformedFrame, "REGISTER with a stream id (top bit set)");
  }
  if (msg.publish_id > env().config.limits.max_registrations) {
    return reject(wire::Code::TooManyRegistrations, "publish id above max_registrations");
  }
  if (grants() && topic::validate_topic(msg.topic, topic_limits()) == topic::Error::Ok) {
    if (wire::Code code = grants()->publish(msg.topic); code != wire::Code::Ok) {
      ++env().counters.entitlement_refusals;
      return reject(code, code == wire::Code::NotProvider ? "the topic belongs to a service this user may not provide"
                                                          : "not entitled to publish to this topic");
    }
  }
  cache::ChannelId id = 0;
  broker::Outcome outcome = advertise(msg.topic, msg.kind, id);
  if (!outcome.ok()) return reject(outcome.code, outcome.detail);
  if (publish_ids_.size() <= msg.publish_id) publish_ids_.resize(msg.publish_id + 1, 0);
  publish_ids_[msg.publish_id] = id;
  if (grants()) remember_topic(msg.publish_id, msg.topic);
}

void NativeSession::remember_topic(uint32_t publish_id, std::string_view topic) {
  if (publish_topics_.size() <= publish_id) publish_topics_.resize(publish_id + 1);
  publish_topics_[publish_id].assign(topic);
}

// Publish ids the new entitlements no longer permit are withdrawn: their
// PUBLISHes are dropped and counted from now on (docs/security.md, "Revocation").
void NativeSession::on_reentitled() {
  for (uint32_t id = 1; id < publish_topics_.size(); ++id) {
    if (publish_ids_[id] == 0 || publish_ids_[id] == kWithdrawn || publish_topics_[id].empty()) continue;
    if (grants()->publish(publish_topics_[id]) == wire::Code::Ok) continue;
    publish_ids_[id] = kWithdrawn;
    TW_INFO("%.*s: publish id %u (%s) withdrawn: no longer entitled", static_cast<int>(name().size()), name().data(),
            id, publish_topics_[id].c_str());
  }
  withdraw_revoked_services();
}

void NativeSession::handle_publish(const wire::Frame& frame) {
  wire::Publish msg;
  if (!wire::decode(frame, msg)) return reject(wire::Code::MalformedFrame, "malformed PUBLISH");
  if (msg.publish_id & wire::kStreamIdBit) {
    auto outcome = env().router.provider_publish(this, msg.publish_id & ~wire::kStreamIdBit, msg.payload, msg.image);
    if (outcome.code == wire::Code::BadPayload || outcome.code == wire::Code::InvalidUtf8) {
      return reject(outcome.code, outcome.detail);
    }
    return note_stray(outcome);
  }
  if (msg.publish_id >= publish_ids_.size() || publish_ids_[msg.publish_id] == 0) {
    return reject(wire::Code::UnknownPublishId, "PUBLISH with a publish id that was never registered");
  }
  if (publish_ids_[msg.publish_id] == kWithdrawn) {
    ++env().counters.withdrawn_publishes;
    return;
  }
  // Delivered frames are up to 12 bytes longer than this PUBLISH; keep them within max_frame.
  if (frame.size + (wire::kImageFixedSize - wire::kPublishFixedSize) > env().config.limits.max_frame) {
    return reject(wire::Code::FrameTooLarge, "payload too large to deliver within max_frame");
  }
  broker::Outcome outcome = env().router.publish(publish_ids_[msg.publish_id], msg.payload, msg.image);
  if (!outcome.ok()) reject(outcome.code, outcome.detail);
}

}  // namespace tw::native
