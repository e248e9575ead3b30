// Guaranteed messaging (docs/guaranteed.md): guaranteed publishes with their
// answers, and queue bindings with acknowledgements.
#include "tickwire/client/client.h"

#include "topic/topic.h"

namespace tw::client {

Result<uint64_t> Client::publish_guaranteed(std::string_view topic, std::span<const uint8_t> payload) {
  if (topic::Error e = topic::validate_topic(topic, topic::Limits{}); e != topic::Error::Ok) {
    return Error{"invalid topic '" + std::string(topic) + "': " + topic::describe(e)};
  }
  if (state_ != State::Connected) return Error{"not connected"};
  if (server_.version < wire::kGuaranteedVersion) return Error{"the broker does not speak guaranteed messaging (protocol 4)"};
  if (unanswered_.size() >= options_.guaranteed_window) return Error{"guaranteed window full: poll and retry"};
  const uint64_t id = next_message_id_++;
  auto [it, added] = unanswered_.emplace(id, Unanswered{std::string(topic), {payload.begin(), payload.end()}});
  send_guaranteed(id, it->second, false);
  return id;
}

void Client::send_guaranteed(uint64_t id, const Unanswered& message, bool retransmit) {
  if (state_ != State::Connected) return;
  wire::GuaranteedPublish m{id, retransmit, message.topic, message.payload};
  const size_t size = wire::kGuaranteedPublishFixedSize + message.topic.size() + message.payload.size();
  if (!queue_frame(size, [&](std::span<uint8_t> out) { return wire::encode(out, m); })) {
    connection_lost("output buffer full while sending GUARANTEED_PUBLISH");
    return;
  }
  ++counters_.guaranteed_sent;
}

Result<uint32_t> Client::bind(std::string_view queue, QueueHandler handler, uint32_t window) {
  return bind(queue, std::move(handler), BindOptions{.window = window});
}

Result<uint32_t> Client::bind(std::string_view queue, QueueHandler handler, const BindOptions& options) {
  if (!handler) return Error{"bind needs a handler"};
  if (queue.empty() || queue.size() > 0xFFFF) return Error{"invalid queue name"};
  if (!options.topic.empty() && topic::validate_pattern(options.topic, topic::Limits{}) != topic::Error::Ok) {
    return Error{"invalid durable subscription topic '" + options.topic + "'"};
  }
  const bool needs_5 = !options.topic.empty() || options.replay != wire::ReplayFrom::None;
  if (needs_5 && state_ == State::Connected && server_.version < wire::kReplayVersion) {
    return Error{"the broker does not speak protocol 5: no durable subscriptions or replay"};
  }
  const uint32_t bind_id = next_request_id_++;
  auto [it, added] = bindings_.emplace(bind_id, Binding{std::string(queue), options, std::move(handler)});
  send_bind(bind_id, it->second);
  return bind_id;
}

void Client::send_bind(uint32_t bind_id, const Binding& binding) {
  if (state_ != State::Connected || server_.version < wire::kGuaranteedVersion) return;
  const BindOptions& o = binding.options;
  wire::Bind m{bind_id, o.window, binding.queue, o.topic, o.replay, o.from};
  if (m.flags() != 0 && server_.version < wire::kReplayVersion) {
    if (on_error_) {
      on_error_(ErrorInfo{wire::Code::UnsupportedVersion, "the broker does not speak protocol 5: not bound", bind_id, binding.queue});
    }
    return;
  }
  if (!queue_frame(wire::bind_size(m), [&](std::span<uint8_t> out) { return wire::encode(out, m); })) {
    connection_lost("output buffer full while sending BIND");
    return;
  }
  pending_[bind_id] = PendingRequest{RequestType::Bind, binding.queue};
}

Status Client::unbind(uint32_t bind_id) { return send_unbind(bind_id, false); }
Status Client::unsubscribe(uint32_t bind_id) { return send_unbind(bind_id, true); }

// An UNBIND lost with a connection needs no resend: the binding ended with it.
// An unsubscribe needs the broker, so it is refused while not connected.
Status Client::send_unbind(uint32_t bind_id, bool unsubscribe) {
  if (!bindings_.contains(bind_id)) return Error{"no such binding"};
  if (unsubscribe && state_ != State::Connected) return Error{"not connected"};
  if (unsubscribe && server_.version < wire::kReplayVersion) {
    return Error{"the broker does not speak protocol 5: no durable subscriptions"};
  }
  bindings_.erase(bind_id);
  if (state_ != State::Connected) return Ok{};
  wire::Unbind m{bind_id, unsubscribe};
  if (!queue_frame(wire::kHeaderSize + 4, [&](std::span<uint8_t> out) { return wire::encode(out, m); })) {
    return Error{"output buffer full"};
  }
  return Ok{};
}

Status Client::ack(uint32_t bind_id, uint64_t seq, bool cumulative) {
  return send_consumer_ack(wire::MsgType::ConsumerAck, bind_id, seq, cumulative);
}

Status Client::nack(uint32_t bind_id, uint64_t seq) { return send_consumer_ack(wire::MsgType::Nack, bind_id, seq, false); }

// An acknowledgement lost with a connection needs no resend: the broker delivers the message again.
Status Client::send_consumer_ack(wire::MsgType type, uint32_t bind_id, uint64_t seq, bool cumulative) {
  if (state_ != State::Connected) return Error{"not connected"};
  wire::ConsumerAck m{bind_id, seq, cumulative};
  if (!queue_frame(wire::kHeaderSize + 12, [&](std::span<uint8_t> out) { return wire::encode(out, type, m); })) {
    return Error{"output buffer full"};
  }
  return Ok{};
}

void Client::resend_guaranteed() {
  for (const auto& [bind_id, binding] : bindings_) send_bind(bind_id, binding);
  for (const auto& [id, message] : unanswered_) send_guaranteed(id, message, true);
}

void Client::handle_publish_ack(const wire::PublishAck& ack) {
  auto it = unanswered_.find(ack.message_id);
  if (it == unanswered_.end()) return;  // answered already (a retransmission's second answer)
  unanswered_.erase(it);
  ++(ack.code == wire::Code::Ok ? counters_.guaranteed_acked : counters_.guaranteed_refused);
  if (on_publish_ack_) on_publish_ack_(PublishAnswer{ack.message_id, ack.code, ack.text});
}

int Client::handle_deliver(const wire::Deliver& d) {
  auto it = bindings_.find(d.bind_id);
  if (it == bindings_.end()) return 0;  // unbound meanwhile: the broker gives it to another consumer
  ++counters_.queue_messages;
  // Copies: the handler may unbind, which ends the binding.
  const QueueHandler handler = it->second.handler;
  const std::string queue = it->second.queue;
  handler(QueueMessage{d.bind_id, queue, d.seq, d.timestamp_ns, d.redelivered, d.topic, d.payload});
  return 1;
}

bool Client::handle_bind_ack(const PendingRequest& request, const wire::Ack& ack) {
  if (request.type != RequestType::Bind) return false;
  if (auto it = bindings_.find(ack.request_id); it != bindings_.end() && ack.code == wire::Code::Ok) {
    it->second.options.replay = wire::ReplayFrom::None;  // replayed once: a rebind goes on from there
  }
  if (ack.code != wire::Code::Ok) {
    bindings_.erase(ack.request_id);
    if (on_error_) on_error_(ErrorInfo{ack.code, ack.text, ack.request_id, request.subject});
  }
  return true;
}

}  // namespace tw::client
