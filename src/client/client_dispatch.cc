// Frame dispatch: one switch over the broker's message types, then routing of
// channel messages to the oldest live subscription whose pattern matches.
#include <string>
#include <vector>

#include "tickwire/client/client.h"
#include "topic/topic.h"

namespace tw::client {

int Client::process_input() {
  int delivered = 0;
  uint64_t epoch = epoch_;
  while (epoch == epoch_) {
    wire::Frame frame;
    auto split = wire::split_frame(in_.readable(), options_.max_frame, frame);
    if (split == wire::SplitResult::NeedMore) break;
    if (split != wire::SplitResult::Frame) {
      connection_lost(split == wire::SplitResult::TooLarge ? "frame from the broker exceeds max_frame"
                                                           : "malformed frame from the broker");
      return delivered;
    }
    delivered += handle_frame(frame);
    if (epoch != epoch_) return delivered;  // a handler closed, or the frame ended the connection
    in_.consume(frame.size);
  }
  if (epoch == epoch_) in_.compact();
  return delivered;
}

namespace {

// "N messages dropped" -> N (at least 1: the text is informative, the gap is what counts).
uint64_t announced_count(std::string_view text) {
  uint64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') break;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n == 0 ? 1 : n;
}

template <typename Msg>
bool decode_into(const wire::Frame& frame, Msg& msg) {
  return wire::decode(frame, msg);
}

}  // namespace

int Client::handle_frame(const wire::Frame& frame) {
  if (state_ == State::Handshake && frame.type != wire::MsgType::Welcome && frame.type != wire::MsgType::Error) {
    connection_lost("broker sent a frame before WELCOME");
    return 0;
  }
  bool ok = true;
  int delivered = 0;
  switch (frame.type) {
    case wire::MsgType::Welcome: {
      wire::Welcome m;
      ok = decode_into(frame, m) && state_ == State::Handshake;
      if (ok && (m.version < wire::kMinProtocolVersion || m.version > options_.protocol_version)) {
        connection_lost("broker chose an unsupported protocol version");
        return 0;
      }
      if (ok) on_welcome(m);
      break;
    }
    case wire::MsgType::Ack: {
      wire::Ack m;
      if ((ok = decode_into(frame, m))) handle_ack(m);
      break;
    }
    case wire::MsgType::Channel: {
      wire::ChannelIntro m;
      if ((ok = decode_into(frame, m))) channels_.introduce(m.channel_id, m.kind, m.topic);
      break;
    }
    case wire::MsgType::Image: {
      wire::Image m;
      if ((ok = decode_into(frame, m))) delivered = handle_image(m);
      break;
    }
    case wire::MsgType::Update: {
      wire::Update m;
      if ((ok = decode_into(frame, m))) delivered = handle_update(m);
      break;
    }
    case wire::MsgType::Status: {
      wire::StatusMsg m;
      if ((ok = decode_into(frame, m))) delivered = handle_status(m);
      break;
    }
    case wire::MsgType::Error: {
      wire::ErrorMsg m;
      if ((ok = decode_into(frame, m))) handle_error(m);
      break;
    }
    case wire::MsgType::Request: {
      wire::Request m;
      if ((ok = decode_into(frame, m) && (m.stream_id & wire::kStreamIdBit) != 0))
        delivered = handle_request(m);
      break;
    }
    case wire::MsgType::Release: {
      wire::ReleaseMsg m;
      if ((ok = decode_into(frame, m))) delivered = handle_release(m);
      break;
    }
    case wire::MsgType::ChannelInfo: {
      wire::ChannelInfo m;
      if ((ok = decode_into(frame, m))) handle_channel_info(m);
      break;
    }
    case wire::MsgType::PublishAck: {
      wire::PublishAck m;
      if ((ok = decode_into(frame, m))) handle_publish_ack(m);
      break;
    }
    case wire::MsgType::Deliver: {
      wire::Deliver m;
      if ((ok = decode_into(frame, m))) delivered = handle_deliver(m);
      break;
    }
    case wire::MsgType::Heartbeat:
      break;  // its arrival already refreshed last_recv_ns_
    default:
      ok = false;  // a client-to-broker type, or one this protocol version does not define
  }
  if (!ok) connection_lost("undecodable frame from the broker");
  return delivered;
}

int Client::handle_image(const wire::Image& image) {
  ChannelRecord& ch = channels_.get_or_add(image.channel_id);
  if (image.request_id != 0) {  // a snapshot answer: not part of the subscription stream
    if (snapshot_wait_ != nullptr && snapshot_wait_->request_id == image.request_id) {
      SnapshotResult& r = snapshot_wait_->result;
      r.found = true;
      r.topic = ch.topic;
      r.channel_id = image.channel_id;
      r.seq = image.seq;
      r.payload_kind = ch.kind;
      r.payload.assign(image.payload.begin(), image.payload.end());
    }
    return 0;
  }
  ChannelTable::on_image(ch, image.seq);
  ++counters_.images;
  Subscription* sub = route(ch);
  if (sub == nullptr) return 0;
  Message msg;
  msg.kind = MessageKind::Image;
  msg.channel_id = image.channel_id;
  msg.seq = image.seq;
  msg.payload = image.payload;
  deliver(*sub, ch, msg);
  return 1;
}

int Client::handle_update(const wire::Update& update) {
  ChannelRecord& ch = channels_.get_or_add(update.channel_id);
  const uint64_t announced = ch.announced_drop;
  ch.announced_drop = 0;
  SequenceCheck check = ChannelTable::on_update(ch, update.seq);
  ++counters_.updates;
  if (check.gap) ++counters_.gaps;
  const bool known_gap = check.gap && announced != 0;
  if (known_gap) ++counters_.announced_gaps;
  Subscription* sub = route(ch);
  if (sub == nullptr) return 0;
  Message msg;
  msg.kind = MessageKind::Update;
  msg.channel_id = update.channel_id;
  msg.seq = update.seq;
  msg.payload = update.payload;
  msg.gap = check.gap;
  msg.expected_seq = check.expected;
  msg.gap_announced = known_gap;
  msg.announced_dropped = known_gap ? announced : 0;
  deliver(*sub, ch, msg);
  return 1;
}

int Client::handle_status(const wire::StatusMsg& status) {
  ChannelRecord& ch = channels_.get_or_add(status.channel_id);
  // A closed channel may come back with a fresh sequence; a stale one keeps its own.
  if (status.state == wire::ChannelState::Closed) ChannelTable::reset_sequence(ch);
  // MESSAGES_DROPPED (state OK): the next UPDATE's seq jump is a known loss;
  // the subscription stays.
  if (status.code == wire::Code::MessagesDropped) ch.announced_drop += announced_count(status.text);
  ++counters_.statuses;
  Message msg;
  msg.kind = MessageKind::Status;
  msg.channel_id = status.channel_id;
  msg.state = status.state;
  msg.code = status.code;
  msg.text = status.text;
  uint64_t epoch = epoch_;
  Subscription* sub = route(ch);
  uint32_t delivered_to = 0;
  int delivered = 0;
  if (sub != nullptr) {
    delivered_to = sub->id;
    deliver(*sub, ch, msg);
    delivered = 1;
  }
  if (status.state != wire::ChannelState::Closed || epoch != epoch_) return delivered;
  ChannelRecord* closed = channels_.find(status.channel_id);  // the handler may have changed the table
  if (closed == nullptr || closed->topic.empty()) return delivered;
  return delivered + end_exact_subscriptions(closed->topic, delivered_to, msg);
}

// The broker ended its exact subscription to `topic` (CLOSED): end ours too,
// telling each ended subscription that has not had this STATUS yet.
int Client::end_exact_subscriptions(const std::string& topic, uint32_t delivered_to, Message& msg) {
  std::string pattern = topic;  // a copy: a handler below may reconnect and clear the channel table
  std::vector<Subscription*> ended;
  for (auto& s : subscriptions_)
    if (s->live && s->pattern == pattern) ended.push_back(s.get());
  if (ended.empty()) return 0;
  for (Subscription* s : ended) retire(*s);
  ++subscription_generation_;
  int delivered = 0;
  uint64_t epoch = epoch_;
  for (Subscription* s : ended) {
    if (s->id == delivered_to || epoch != epoch_) continue;
    msg.topic = pattern;
    msg.payload_kind = wire::PayloadKind::FieldList;
    msg.subscription_id = s->id;
    ++counters_.messages;
    ++dispatch_depth_;
    s->handler(msg);
    --dispatch_depth_;
    ++delivered;
  }
  return delivered;
}

Client::Subscription* Client::route(ChannelRecord& ch) {
  if (ch.routing_generation == subscription_generation_) {
    if (ch.routed_subscription == 0) {
      ++counters_.unrouted;
      return nullptr;
    }
    return subscriptions_[ch.routed_subscription - 1].get();
  }
  // Routing changes only when subscriptions change, so the pattern scan runs
  // once per channel per subscription change, not once per message.
  ch.routing_generation = subscription_generation_;
  ch.routed_subscription = 0;
  if (!ch.topic.empty()) {
    for (size_t i = 0; i < subscriptions_.size(); ++i) {
      const Subscription& s = *subscriptions_[i];
      if (s.live && topic::matches(s.pattern, ch.topic)) {
        ch.routed_subscription = static_cast<uint32_t>(i + 1);
        return subscriptions_[i].get();
      }
    }
  }
  ++counters_.unrouted;
  return nullptr;
}

void Client::deliver(Subscription& sub, const ChannelRecord& ch, Message& msg) {
  msg.topic = ch.topic;
  msg.payload_kind = ch.kind;
  msg.subscription_id = sub.id;
  ++counters_.messages;
  ++dispatch_depth_;
  sub.handler(msg);
  --dispatch_depth_;
}

void Client::handle_ack(const wire::Ack& ack) {
  auto it = pending_.find(ack.request_id);
  if (it == pending_.end()) return;  // e.g. an ACK for a request of a previous connection
  PendingRequest request = std::move(it->second);
  pending_.erase(it);
  if (handle_provider_ack(request, ack)) return;
  if (handle_bind_ack(request, ack)) return;
  if (request.type == RequestType::Snapshot) {
    if (snapshot_wait_ != nullptr && snapshot_wait_->request_id == ack.request_id) {
      snapshot_wait_->done = true;
      snapshot_wait_->code = ack.code;
      snapshot_wait_->text.assign(ack.text);
    }
    return;
  }
  if (ack.code == wire::Code::Ok) return;
  if (request.type == RequestType::Subscribe) {
    for (auto& s : subscriptions_)
      if (s->live && s->pattern == request.subject) retire(*s);
    ++subscription_generation_;
  }
  if (on_error_) on_error_(ErrorInfo{ack.code, ack.text, ack.request_id, request.subject});
}

void Client::handle_error(const wire::ErrorMsg& error) {
  ++counters_.errors;
  if (error.code == wire::Code::NotPrimary) not_primary_in_round_ = true;
  last_failure_ = std::string("broker error ") + wire::code_name(error.code) + ": " + std::string(error.text);
  std::string reason = last_failure_;
  if (on_error_) on_error_(ErrorInfo{error.code, error.text, 0, {}});
  // The broker closes after ERROR; end the connection now so the reason is the error, not the EOF.
  connection_lost(reason);
}

}  // namespace tw::client
