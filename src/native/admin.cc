// LIST_CHANNELS in, CHANNEL_INFO out (docs/protocol.md, "Administration").
#include "native/native_session.h"
#include "wire/utf8.h"

namespace tw::native {

void NativeSession::handle_list_channels(const wire::Frame& frame) {
  wire::ListChannels msg;
  if (!wire::decode(frame, msg)) return reject(wire::Code::MalformedFrame, "malformed LIST_CHANNELS");
  if (!wire::valid_text(msg)) return reject(wire::Code::InvalidUtf8, "LIST_CHANNELS service is not valid UTF-8");
  send_ack(msg.request_id, env().router.list_channels(this, msg.service, msg.request_id));
}

void NativeSession::send_channel_info(const wire::ChannelInfo& info) {
  if (!closing()) queue_control(info, 2 * kControlFrameMax);
}

}  // namespace tw::native
