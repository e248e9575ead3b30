// Client public API: subscriptions, registrations, publishing, snapshots.
// The connection state machine is in client_connection.cc, frame dispatch in
// client_dispatch.cc.
#include "tickwire/client/client.h"

#include <algorithm>

#include "base/clock.h"
#include "session/tls_context.h"  // complete types for ~Client
#include "session/tls_transport.h"
#include "topic/topic.h"

namespace tw::client {

namespace {

constexpr uint64_t kNsPerMs = 1'000'000;

Error topic_error(std::string_view what, std::string_view text, topic::Error e) {
  return Error{std::string(what) + " '" + std::string(text) + "': " + topic::describe(e)};
}

}  // namespace

Client::Client() = default;

Client::~Client() { close(); }

size_t Client::subscription_count() const {
  return static_cast<size_t>(std::count_if(subscriptions_.begin(), subscriptions_.end(),
                                           [](const auto& s) { return s->live; }));
}

bool Client::has_live_pattern(std::string_view pattern) const {
  for (const auto& s : subscriptions_)
    if (s->live && s->pattern == pattern) return true;
  return false;
}

void Client::send_subscribe(wire::MsgType type, std::string_view pattern, wire::SlowPolicy policy,
                            uint32_t conflate_ms, uint32_t delay_ms) {
  if (state_ != State::Connected) return;  // sent by resend_state() after WELCOME
  uint32_t request_id = next_request_id_++;
  wire::Subscribe m{request_id, pattern, policy, conflate_ms, delay_ms};
  bool queued = queue_frame(wire::kHeaderSize + 14 + pattern.size(),
                            [&](std::span<uint8_t> out) { return wire::encode(out, type, m); });
  if (!queued) {
    connection_lost("output buffer full while sending a subscription request");
    return;
  }
  RequestType rt = type == wire::MsgType::Subscribe ? RequestType::Subscribe : RequestType::Unsubscribe;
  pending_[request_id] = PendingRequest{rt, std::string(pattern)};
}

void Client::send_register(PublisherId id, const Registration& reg) {
  if (state_ != State::Connected) return;
  wire::Register m{id, reg.kind, reg.topic};
  bool queued = queue_frame(wire::kHeaderSize + 7 + reg.topic.size(),
                            [&](std::span<uint8_t> out) { return wire::encode(out, m); });
  if (!queued) connection_lost("output buffer full while sending REGISTER");
}

Result<uint32_t> Client::subscribe(std::string_view pattern, MessageHandler handler, wire::SlowPolicy policy,
                                   uint32_t conflate_ms, uint32_t delay_ms) {
  if (!handler) return Error{"subscribe needs a handler"};
  topic::Error e = topic::validate_pattern(pattern, topic::Limits{});
  if (e != topic::Error::Ok) return topic_error("invalid pattern", pattern, e);
  bool already_sent = has_live_pattern(pattern);
  auto sub = std::make_unique<Subscription>();
  sub->id = next_subscription_id_++;
  sub->pattern.assign(pattern);
  sub->handler = std::move(handler);
  sub->policy = policy;
  sub->conflate_ms = conflate_ms;
  sub->delay_ms = delay_ms;
  uint32_t id = sub->id;
  subscriptions_.push_back(std::move(sub));
  ++subscription_generation_;
  if (!already_sent) send_subscribe(wire::MsgType::Subscribe, pattern, policy, conflate_ms, delay_ms);
  return id;
}

Status Client::unsubscribe(std::string_view pattern) {
  bool found = false;
  for (auto& s : subscriptions_) {
    if (s->live && s->pattern == pattern) {
      retire(*s);
      found = true;
    }
  }
  if (!found) return Error{"not subscribed to '" + std::string(pattern) + "'"};
  ++subscription_generation_;
  send_subscribe(wire::MsgType::Unsubscribe, pattern);
  sweep_subscriptions();
  return Ok{};
}

// Called after every poll: without a retired entry it costs nothing, where
// scanning a client's thousands of subscriptions each time would cost the
// subscriber microseconds per poll.
void Client::sweep_subscriptions() {
  if (!retired_ || dispatch_depth_ > 0) return;
  retired_ = false;
  std::erase_if(provisions_, [](const auto& p) { return !p->live; });
  // Erasing shifts the indexes that channels cache for routing: invalidate them.
  if (std::erase_if(subscriptions_, [](const auto& s) { return !s->live; }) > 0) ++subscription_generation_;
}

Result<PublisherId> Client::advertise(std::string_view topic, wire::PayloadKind kind) {
  if (auto it = publisher_by_topic_.find(topic); it != publisher_by_topic_.end()) {
    if (registrations_[it->second - 1].kind != kind)
      return Error{"topic '" + std::string(topic) + "' already advertised with another payload kind"};
    return it->second;
  }
  topic::Error e = topic::validate_topic(topic, topic::Limits{});
  if (e != topic::Error::Ok) return topic_error("invalid topic", topic, e);
  registrations_.push_back(Registration{std::string(topic), kind});
  auto id = static_cast<PublisherId>(registrations_.size());
  publisher_by_topic_.emplace(std::string(topic), id);
  send_register(id, registrations_.back());
  return id;
}

Status Client::publish(PublisherId id, std::span<const uint8_t> payload, bool image) {
  if (id == 0 || id > registrations_.size()) return Error{"unknown publisher id"};
  if (state_ != State::Connected) {
    ++counters_.publish_rejected;
    return Error{"not connected"};
  }
  size_t size = wire::kPublishFixedSize + payload.size();
  if (server_.max_frame != 0 && size > server_.max_frame) {
    ++counters_.publish_rejected;
    return Error{"payload exceeds the broker's max_frame"};
  }
  wire::Publish m{id, image, payload};
  if (!queue_frame(size, [&](std::span<uint8_t> out) { return wire::encode(out, m); })) {
    ++counters_.publish_rejected;
    return Error{"output buffer full (back pressure): poll() or flush() and retry"};
  }
  ++counters_.published;
  return Ok{};
}

Status Client::publish(std::string_view topic, std::span<const uint8_t> payload, bool image,
                       wire::PayloadKind kind) {
  PublisherId id = 0;
  if (auto it = publisher_by_topic_.find(topic); it != publisher_by_topic_.end()) {
    id = it->second;
  } else {
    auto advertised = advertise(topic, kind);
    if (!advertised) return advertised.error();
    id = *advertised;
  }
  return publish(id, payload, image);
}

Result<SnapshotResult> Client::snapshot(std::string_view topic, int timeout_ms) {
  if (dispatch_depth_ > 0 || in_poll_) return Error{"snapshot() cannot be called from a callback"};
  topic::Error e = topic::validate_topic(topic, topic::Limits{});
  if (e != topic::Error::Ok) return topic_error("invalid topic", topic, e);
  if (state_ != State::Connected) return Error{"not connected"};
  SnapshotWait wait;
  wait.request_id = next_request_id_++;
  wire::Snapshot m{wait.request_id, topic};
  if (!queue_frame(wire::kHeaderSize + 6 + topic.size(),
                   [&](std::span<uint8_t> out) { return wire::encode(out, m); }))
    return Error{"output buffer full"};
  pending_[wait.request_id] = PendingRequest{RequestType::Snapshot, std::string(topic)};
  snapshot_wait_ = &wait;
  uint64_t epoch = epoch_;
  uint64_t deadline = monotonic_ns() + static_cast<uint64_t>(std::max(timeout_ms, 0)) * kNsPerMs;
  in_poll_ = true;
  while (!wait.done && epoch == epoch_ && monotonic_ns() < deadline) run_once(deadline);
  in_poll_ = false;
  snapshot_wait_ = nullptr;
  pending_.erase(wait.request_id);
  if (epoch != epoch_) return Error{"connection lost during snapshot: " + last_failure_};
  if (!wait.done) return Error{"snapshot of '" + std::string(topic) + "' timed out"};
  if (wait.code == wire::Code::NotFound) return SnapshotResult{};
  if (wait.code != wire::Code::Ok)
    return Error{std::string("snapshot refused: ") + wire::code_name(wait.code) + " " + wait.text};
  if (!wait.result.found) return Error{"broker acknowledged the snapshot without an image"};
  return std::move(wait.result);
}

void Client::emit_connection(ConnectionEvent event, std::string_view reason) {
  if (on_connection_) on_connection_(event, reason);
}

const char* kind_name(MessageKind kind) {
  switch (kind) {
    case MessageKind::Image: return "IMAGE";
    case MessageKind::Update: return "UPDATE";
    case MessageKind::Status: return "STATUS";
  }
  return "?";
}

const char* event_name(ConnectionEvent event) {
  switch (event) {
    case ConnectionEvent::Connected: return "connected";
    case ConnectionEvent::Disconnected: return "disconnected";
    case ConnectionEvent::Reconnected: return "reconnected";
  }
  return "?";
}

}  // namespace tw::client
