// LIST_CHANNELS in, CHANNEL_INFO out (docs/protocol.md, "Administration").
#include "base/log.h"
#include "native/native_session.h"

namespace tw::native {

void NativeSession::handle_list_channels(const wire::Frame& frame) {
  wire::ListChannels msg;
  if (!wire::decode(frame, msg)) return reject(wire::Code::MalformedFrame, "malformed LIST_CHANNELS");
  send_ack(msg.request_id, env().router.list_channels(this, msg.service, msg.request_id));
}

// RELOAD: an admin user has the users file read again, off the loop; the ACK
// follows on a tick once it was (OK) or was not (NOT_FOUND, the rules in force stay).
void NativeSession::handle_reload(const wire::Frame& frame) {
  wire::ReloadMsg msg;
  if (!wire::decode(frame, msg)) return reject(wire::Code::MalformedFrame, "malformed RELOAD");
  if (env().authority == nullptr) return send_ack(msg.request_id, {wire::Code::NotAuthorized, "no users file to reload"});
  if (!grants()->admin()) return send_ack(msg.request_id, {wire::Code::NotAuthorized, "RELOAD needs an admin user"});
  if (reload_) return send_ack(msg.request_id, {wire::Code::NotAuthorized, "a RELOAD of this connection is in progress"});
  reload_ = env().authority->reload_for();
  reload_request_id_ = msg.request_id;
  TW_INFO("%.*s asked for a users file reload", static_cast<int>(name().size()), name().data());
}

void NativeSession::answer_reload() {
  if (!reload_->done.load(std::memory_order_acquire)) return;
  const auto answer = std::move(reload_);
  send_ack(reload_request_id_, answer->reloaded ? broker::Outcome{} : broker::Outcome{wire::Code::NotFound, answer->error});
}

// A listing shows only the channels the user may receive (live or delayed).
void NativeSession::send_channel_info(const wire::ChannelInfo& info) {
  if (grants() && !grants()->receives(info.topic, UINT32_MAX)) return;
  if (!closing()) queue_control(info, 2 * kControlFrameMax);
}

}  // namespace tw::native
