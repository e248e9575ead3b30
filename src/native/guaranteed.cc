// Guaranteed messaging, protocol version 4 and BIND's and UNBIND's flags of
// version 5 (docs/protocol.md, "Guaranteed messaging"): GUARANTEED_PUBLISH, BIND, UNBIND, CONSUMER_ACK and NACK go to
// the store thread (queue::Spool); its PUBLISH_ACKs, ACKs and DELIVERs come
// back through the connection's port, already encoded.
#include "native/native_session.h"

#include "base/log.h"
#include "queue/spool.h"
#include "topic/topic.h"
#include "tickwire/wire/guaranteed.h"
#include "wire/utf8.h"

namespace tw::native {

NativeSession::~NativeSession() {
  if (!port_) return;
  port_->handler = nullptr;  // letters already on their way are dropped
  if (env().spool != nullptr) env().spool->detach(port_);
}

const std::shared_ptr<queue::Port>& NativeSession::port() {
  if (!port_) port_ = std::make_shared<queue::Port>(queue::Port{env().mailbox, this});
  return port_;
}

void NativeSession::handle_guaranteed(const wire::Frame& frame) {
  if (version_ < wire::kGuaranteedVersion) {
    return reject(wire::Code::UnknownType, "guaranteed messaging needs protocol version 4");
  }
  switch (frame.type) {
    case wire::MsgType::GuaranteedPublish: return handle_guaranteed_publish(frame);
    case wire::MsgType::Bind: return handle_bind(frame);
    default: return handle_consumer_ack(frame);
  }
}

void NativeSession::refuse_publish(uint64_t message_id, wire::Code code, std::string_view text) {
  const wire::PublishAck answer{message_id, code, text};
  queue_control(answer, wire::publish_ack_size(answer));
}

void NativeSession::handle_guaranteed_publish(const wire::Frame& frame) {
  wire::GuaranteedPublish msg;
  if (!wire::decode(frame, msg)) return reject(wire::Code::MalformedFrame, "malformed GUARANTEED_PUBLISH");
  if (!wire::valid_utf8(msg.topic)) return reject(wire::Code::InvalidUtf8, "GUARANTEED_PUBLISH topic is not valid UTF-8");
  if (env().spool == nullptr) {
    return refuse_publish(msg.message_id, wire::Code::NoStore, "this broker has no store (store.dir): no guaranteed messaging");
  }
  if (topic::Error e = topic::validate_topic(msg.topic, topic_limits()); e != topic::Error::Ok) {
    return refuse_publish(msg.message_id, wire::Code::InvalidTopic, topic::describe(e));
  }
  if (grants() && grants()->publish(msg.topic) != wire::Code::Ok) {
    ++env().counters.entitlement_refusals;
    return refuse_publish(msg.message_id, wire::Code::NotAuthorized, "not entitled to publish to this topic");
  }
  // Delivered frames are 12 bytes longer than this one; keep them within max_frame.
  if (frame.size + (wire::kDeliverFixedSize - wire::kGuaranteedPublishFixedSize) > env().config.limits.max_frame) {
    return refuse_publish(msg.message_id, wire::Code::FrameTooLarge, "payload too large to deliver within max_frame");
  }
  env().spool->publish(port(), msg.message_id, std::string(msg.topic),
                       std::vector<uint8_t>(msg.payload.begin(), msg.payload.end()), msg.retransmit);
  // Flow control: past the window the connection is not read until the store answers.
  if (++unanswered_ >= env().config.store.publish_window) {
    window_full_ = true;
    pause_input(true);
  }
}

void NativeSession::handle_bind(const wire::Frame& frame) {
  wire::Bind msg;
  if (!wire::decode(frame, msg)) return reject(wire::Code::MalformedFrame, "malformed BIND");
  if (frame.flags != 0 && version_ < wire::kReplayVersion) {
    return reject(wire::Code::MalformedFrame, "BIND's flags (durable subscription, replay) need protocol version 5");
  }
  if (!wire::valid_utf8(msg.queue) || !wire::valid_utf8(msg.topic)) {
    return reject(wire::Code::InvalidUtf8, "BIND queue name or topic is not valid UTF-8");
  }
  if (env().spool == nullptr) {
    return send_ack(msg.bind_id, {wire::Code::NoStore, "this broker has no store (store.dir): no queues"});
  }
  if (!msg.topic.empty()) {
    if (topic::Error e = topic::validate_pattern(msg.topic, topic_limits()); e != topic::Error::Ok) {
      return send_ack(msg.bind_id, {wire::Code::InvalidTopic, topic::describe(e)});
    }
    if (grants() && !grants()->subscribes_wholly(msg.topic)) {
      ++env().counters.entitlement_refusals;
      return send_ack(msg.bind_id, {wire::Code::NotAuthorized, "not entitled to receive every topic of this durable subscription in real time"});
    }
  }
  // A queue name is one topic level: the consume rules' patterns name queues.
  if (grants() && topic::validate_topic(msg.queue, topic_limits()) == topic::Error::Ok &&
      !grants()->consumes(msg.queue)) {
    ++env().counters.entitlement_refusals;
    return send_ack(msg.bind_id, {wire::Code::NotAuthorized, "not entitled to consume from this queue"});
  }
  queue::BindOptions options{std::string(msg.topic), msg.replay, msg.from};
  env().spool->bind(port(), msg.bind_id, msg.window, std::string(msg.queue), std::move(options));
}

// UNBIND, CONSUMER_ACK and NACK: without a store nothing is bound, and they are ignored.
void NativeSession::handle_consumer_ack(const wire::Frame& frame) {
  if (frame.type == wire::MsgType::Unbind) {
    wire::Unbind msg;
    if (!wire::decode(frame, msg)) return reject(wire::Code::MalformedFrame, "malformed UNBIND");
    if (msg.unsubscribe && version_ < wire::kReplayVersion) {
      return reject(wire::Code::MalformedFrame, "UNBIND's unsubscribe flag needs protocol version 5");
    }
    if (env().spool == nullptr) return send_ack(msg.bind_id, {wire::Code::NotFound, "not bound"});
    return env().spool->unbind(port(), msg.bind_id, msg.unsubscribe);
  }
  wire::ConsumerAck msg;
  if (!wire::decode(frame, msg)) return reject(wire::Code::MalformedFrame, "malformed CONSUMER_ACK or NACK");
  if (env().spool == nullptr) return;
  if (frame.type == wire::MsgType::Nack) return env().spool->nack(port(), msg.bind_id, msg.seq);
  env().spool->ack(port(), msg.bind_id, msg.seq, msg.cumulative);
}

void NativeSession::on_store_frames(std::span<const uint8_t> frames, uint32_t answered) {
  if (closing()) return;
  output().queue(frames.size(), [&](std::span<uint8_t> out) {
    std::copy(frames.begin(), frames.end(), out.begin());
    return frames.size();
  });
  unanswered_ -= std::min(unanswered_, answered);
  if (window_full_ && unanswered_ < env().config.store.publish_window) {
    window_full_ = false;
    resume_input();
  }
}

}  // namespace tw::native
