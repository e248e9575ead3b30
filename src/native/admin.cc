// LIST_CHANNELS in, CHANNEL_INFO out (docs/protocol.md, "Administration").
#include "native/native_session.h"

namespace tw::native {

void NativeSession::handle_list_channels(const wire::Frame& frame) {
  wire::ListChannels msg;
  if (!wire::decode(frame, msg)) return reject(wire::Code::MalformedFrame, "malformed LIST_CHANNELS");
  send_ack(msg.request_id, env().router.list_channels(this, msg.service, msg.request_id));
}

// A listing shows only the channels the user may receive (live or delayed).
void NativeSession::send_channel_info(const wire::ChannelInfo& info) {
  if (grants() && !grants()->receives(info.topic, UINT32_MAX)) return;
  if (!closing()) queue_control(info, 2 * kControlFrameMax);
}

}  // namespace tw::native
