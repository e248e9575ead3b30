// LIST_CHANNELS in, CHANNEL_INFO out (docs/protocol.md, "Administration").
// A listing of a million channels is tens of megabytes: it is produced a
// page at a time as the connection's output drains (Session::begin_paced),
// so a client that never reads holds at most a page, and each turn of the
// loop looks at a bounded number of channels.
#include "native/native_session.h"

namespace tw::native {

namespace {
constexpr size_t kListingPage = 256;                 // channel ids looked at between output checks
constexpr size_t kListingVisitsPerTurn = 16 * 1024;  // channel ids looked at per loop turn
}  // namespace

void NativeSession::handle_list_channels(const wire::Frame& frame) {
  wire::ListChannels msg;
  if (!wire::decode(frame, msg)) return reject(wire::Code::MalformedFrame, "malformed LIST_CHANNELS");
  listing_ = broker::ListingCursor{std::string(msg.service), msg.request_id};
  continue_listing();
}

void NativeSession::continue_listing() {
  for (size_t visits = 0; listing_ && !closing() && output_has_room() && visits < kListingVisitsPerTurn;
       visits += kListingPage) {
    const broker::Outcome outcome = env().router.list_channels_page(this, *listing_, kListingPage);
    if (!listing_->done) continue;
    const uint32_t request_id = listing_->request_id;
    listing_.reset();
    send_ack(request_id, outcome);
  }
  if (listing_ && !closing()) return begin_paced();
  end_paced();
}

// Rows a gateway sends (tiered broker) arrive whole, not paced: a client
// that does not read them is a slow consumer past max_output_buffer.
void NativeSession::send_channel_info(const wire::ChannelInfo& info) {
  if (closing()) return;
  if (queued_output() > env().config.limits.max_output_buffer) {
    ++env().counters.slow_consumers;
    return fail(wire::Code::SlowConsumer, "channel listing not read: output buffer limit exceeded");
  }
  queue_control(info, 2 * kControlFrameMax);
}

}  // namespace tw::native
