// An access point's inbound side in a tiered broker: the records gateways
// send it. Stream frames feed the mirror router (which fans them out by
// reference: the frames stay in the ring until the turn's output is flushed);
// the rest goes to the connection a record names.
#include <algorithm>
#include <cstring>
#include <utility>

#include "base/log.h"
#include "tier/access_point.h"
#include "tickwire/wire/codec.h"

namespace tw::tier {

bool AccessPoint::drain_gateways() {
  if (!uplink_) return false;
  bool any = false;
  auto& links = uplink_->links();
  for (uint32_t g = 0; g < links.size(); ++g) {
    SpscRing& ring = links[g]->to_access_point.ring();
    for (size_t n = 0; n < kRecordsPerTurn; ++n) {
      auto bytes = ring.read();
      if (bytes.empty()) break;
      any = true;
      Record r;
      if (!read_record(bytes, r)) continue;
      if (r.op == Op::Settled) {
        settled(g, r);
      } else {
        handle(g, r);
      }
    }
  }
  return any;
}

// A gateway holds a subscription's interest: its ACK goes once every gateway concerned does.
void AccessPoint::settled(uint32_t gateway, const Record& r) {
  if (!uplink_->settled(gateway, r)) return;
  if (session::Session* session = session_of(r.token)) session->settled();
}

session::Session* AccessPoint::session_of(uint32_t token) {
  auto it = sessions_.find(token);
  return it == sessions_.end() || it->second->closing() ? nullptr : it->second.get();
}

void AccessPoint::hold_origin(uint32_t gateway, const Record& r) {
  PendingOrigin& pending = pending_origins_[gateway];
  if ((r.flags & kFlagRetainedAside) != 0) return hold_retained(pending, r);
  pending.attributes.assign(r.bytes.begin(), r.bytes.end());
  pending.origin = {r.token != 0 ? session_of(r.token) : nullptr, r.token, 0, (r.flags & kFlagRetain) != 0,
                    (r.flags & kFlagTransient) != 0, pending.attributes};
  if (pending.has_retained) pending.origin.retained_aside = &pending.retained;
  pending.has_retained = false;
}

void AccessPoint::hold_retained(PendingOrigin& pending, const Record& r) {
  const size_t attributes = std::min<size_t>(r.arg, r.bytes.size());
  pending.retained.active = true;
  pending.retained.attributes.assign(r.bytes.begin(), r.bytes.begin() + attributes);
  pending.retained.opaque.assign(r.bytes.begin() + attributes, r.bytes.end());
  pending.has_retained = true;
}

void AccessPoint::handle(uint32_t gateway, const Record& r) {
  if (r.op == Op::Stream) return handle_stream(gateway, r.bytes);
  if (r.op == Op::Forget) return mirror_->forget(r.id);
  if (r.op == Op::Origin) return hold_origin(gateway, r);
  session::Session* session = session_of(r.token);
  if (!session) return;  // it closed while the gateway answered
  switch (r.op) {
    case Op::ToOutlet: return forward(*session, r.bytes);
    case Op::SnapshotImage: return answer_snapshot(*session, r);
    case Op::ListPage:
      if (broker::RequesterOutlet* requester = session->as_requester()) requester->listing_page(r.arg, r.id, r.flags != 0);
      return;
    case Op::Done:
      if (!uplink_->request_done(r.token, r.arg)) return;
      if (broker::RequesterOutlet* requester = session->as_requester()) requester->complete_request(r.arg, {r.code, r.a.data()});
      return;
    default: TW_WARN("access point: unexpected link record %u", static_cast<unsigned>(r.op)); return;
  }
}

// A Stream record holds one or more frames, back to back.
void AccessPoint::handle_stream(uint32_t gateway, std::span<const uint8_t> bytes) {
  wire::Frame frame;
  while (wire::split_frame(bytes, ~uint32_t{0}, frame) == wire::SplitResult::Frame) {
    handle_stream_frame(gateway, frame, bytes.first(frame.size));
    bytes = bytes.subspan(frame.size);
  }
}

void AccessPoint::handle_stream_frame(uint32_t gateway, const wire::Frame& frame, std::span<const uint8_t> bytes) {
  switch (frame.type) {
    case wire::MsgType::Channel: {
      wire::ChannelIntro m;
      if (wire::decode(frame, m)) mirror_->channel(m.channel_id, m.topic, m.kind);
      return;
    }
    case wire::MsgType::Image: {
      wire::Image m;
      if (wire::decode(frame, m)) {
        mirror_->message(m.channel_id, m.seq, m.payload, bytes, true, m.request_id == kPriorImage,
                         take_origin(gateway));
      }
      return;
    }
    case wire::MsgType::Update: {
      wire::Update m;
      if (wire::decode(frame, m)) {
        mirror_->message(m.channel_id, m.seq, m.payload, bytes, false, false, take_origin(gateway));
      }
      return;
    }
    case wire::MsgType::Status: {
      wire::StatusMsg m;
      if (wire::decode(frame, m)) mirror_->status(m.channel_id, m.state, m.code, m.text);
      return;
    }
    default: return;
  }
}

// Decoding costs nothing that matters here (requests, releases and listing
// rows, never stream messages) and lets every protocol's session encode them.
void AccessPoint::forward(session::Session& session, std::span<const uint8_t> bytes) {
  wire::Frame frame;
  if (wire::split_frame(bytes, ~uint32_t{0}, frame) != wire::SplitResult::Frame) return;
  broker::ProviderOutlet* provider = session.as_provider();
  broker::RequesterOutlet* requester = session.as_requester();
  switch (frame.type) {
    case wire::MsgType::Request: {
      wire::Request m;
      if (provider && wire::decode(frame, m)) provider->send_request(m.stream_id, m.topic);
      return;
    }
    case wire::MsgType::Release: {
      wire::ReleaseMsg m;
      if (provider && wire::decode(frame, m)) provider->send_release(m.stream_id);
      return;
    }
    case wire::MsgType::ChannelInfo: {
      wire::ChannelInfo m;
      if (requester && wire::decode(frame, m)) requester->send_channel_info(m);
      return;
    }
    default: TW_WARN("access point: unexpected forwarded frame type %u", static_cast<unsigned>(frame.type)); return;
  }
}

// A snapshot of a channel this access point does not mirror: the owner sent
// its image; the session encodes it as its own (introducing the channel).
void AccessPoint::answer_snapshot(session::Session& session, const Record& r) {
  wire::Frame frame;
  wire::Image image;
  if (wire::split_frame(r.bytes, ~uint32_t{0}, frame) != wire::SplitResult::Frame || !wire::decode(frame, image)) {
    return;
  }
  cache::Channel copy;
  copy.id = image.channel_id;
  copy.topic = std::string(r.a);
  copy.kind = static_cast<wire::PayloadKind>(r.flags);
  if (!copy.apply(image.payload, true, fields::Checked::Already)) return;  // the gateway's own encoding
  copy.seq = image.seq;
  session.send_image(copy, r.arg);
}

}  // namespace tw::tier
