// Interactive providers: PROVIDE, WITHDRAW and STREAM_STATUS in; REQUEST and
// RELEASE out (docs/protocol.md, "Providers").
#include "base/log.h"
#include "base/rate_limit.h"
#include "native/native_session.h"
#include "wire/utf8.h"

namespace tw::native {

void NativeSession::handle_provide(const wire::Frame& frame, bool provide) {
  wire::Provide msg;
  bool ok = false;
  if (provide) {
    ok = wire::decode(frame, msg);
  } else {
    wire::Withdraw w;
    ok = wire::decode(frame, w);
    msg.request_id = w.request_id;
    msg.service = w.service;
  }
  if (!ok) return reject(wire::Code::MalformedFrame, provide ? "malformed PROVIDE" : "malformed WITHDRAW");
  if (!wire::valid_text(msg)) return reject(wire::Code::InvalidUtf8, "service or pattern is not valid UTF-8");
  if (provide && grants() && grants()->provide(msg.service, msg.pattern) != wire::Code::Ok) {
    ++env().counters.entitlement_refusals;
    return send_ack(msg.request_id, {wire::Code::NotAuthorized, "not entitled to provide this service"});
  }
  broker::Outcome outcome = provide ? env().router.provide(this, msg.service, msg.pattern)
                                    : env().router.withdraw(this, msg.service);
  send_ack(msg.request_id, outcome);
  // As for a SUBSCRIBE (Session::settle): in thread tiers the ACK goes once every gateway has the
  // provider (or knows it gone), so requests made after it reach it, and none after a WITHDRAW's.
  if (outcome.ok() && grants()) {
    if (provide) {
      provided_[std::string(msg.service)] = std::string(msg.pattern);
    } else if (auto it = provided_.find(msg.service); it != provided_.end()) {
      provided_.erase(it);
    }
  }
  if (outcome.ok()) {
    const std::string_view every_gateway[] = {">"};
    settle(every_gateway);
    TW_INFO("%.*s %s service %.*s", static_cast<int>(name().size()), name().data(),
            provide ? "provides" : "withdrew", static_cast<int>(msg.service.size()), msg.service.data());
  }
}

// As if the provider had sent WITHDRAW: subscribers fail over to another
// provider or see the channel stale (PROVIDER_LOST), no more REQUESTs reach
// this connection, and what it still publishes into those streams is stray.
void NativeSession::withdraw_revoked_services() {
  for (auto it = provided_.begin(); it != provided_.end();) {
    if (grants()->provide(it->first, it->second) == wire::Code::Ok) {
      ++it;
      continue;
    }
    (void)env().router.withdraw(this, it->first);
    TW_INFO("%.*s: service %s withdrawn: no longer entitled to provide it", static_cast<int>(name().size()),
            name().data(), it->first.c_str());
    it = provided_.erase(it);
  }
}

void NativeSession::handle_stream_status(const wire::Frame& frame) {
  wire::StreamStatus msg;
  if (!wire::decode(frame, msg)) return reject(wire::Code::MalformedFrame, "malformed STREAM_STATUS");
  if (!wire::valid_text(msg)) return reject(wire::Code::InvalidUtf8, "STREAM_STATUS text is not valid UTF-8");
  if (!(msg.stream_id & wire::kStreamIdBit)) return publisher_status(msg);
  note_stray(env().router.provider_status(this, msg.stream_id & ~wire::kStreamIdBit, msg.state, msg.code, msg.text));
}

// STREAM_STATUS naming a publish id: STALE or OK of a channel this connection
// registered (a broker link's word on what it brings in, docs/protocol.md).
void NativeSession::publisher_status(const wire::StreamStatus& msg) {
  const uint32_t id = msg.stream_id;
  if (id >= publish_ids_.size() || publish_ids_[id] == 0 || publish_ids_[id] == kWithdrawn) {
    return reject(wire::Code::UnknownPublishId, "STREAM_STATUS with a publish id that is not registered");
  }
  if (msg.state == wire::ChannelState::Closed) {
    return reject(wire::Code::MalformedFrame, "a publisher's STREAM_STATUS may say STALE or OK only");
  }
  note_stray(env().router.publisher_status(this, publish_ids_[id], msg.state, msg.code, msg.text));
}

void NativeSession::note_stray(const broker::Outcome& outcome) {
  if (outcome.ok()) return;
  ++env().counters.stray_provider_messages;
  if (stray_logged_) return;
  stray_logged_ = true;
  TW_WARN_LIMITED("provider %.*s: %s (ignored; further ones are counted, not logged)", static_cast<int>(name().size()),
          name().data(), outcome.detail);
}

void NativeSession::send_request(uint32_t stream_id, std::string_view topic) {
  if (!closing()) queue_control(wire::Request{stream_id, topic});
}

void NativeSession::send_release(uint32_t stream_id) {
  if (!closing()) queue_control(wire::ReleaseMsg{stream_id});
}

}  // namespace tw::native
