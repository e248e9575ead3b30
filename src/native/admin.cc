// LIST_CHANNELS in, CHANNEL_INFO out (docs/protocol.md, "Administration").
// A listing of a million channels is tens of megabytes: it is produced a
// page at a time as the connection's output drains (Session::begin_paced),
// so a client that never reads holds at most a page, and each turn of the
// loop looks at a bounded number of channels.
#include "base/log.h"
#include "native/native_session.h"
#include "session/listing.h"
#include "wire/utf8.h"

namespace tw::native {

namespace {
constexpr size_t kListingPage = 256;                 // channel ids looked at between output checks
constexpr size_t kListingVisitsPerTurn = 16 * 1024;  // channel ids looked at per loop turn
}  // namespace

void NativeSession::handle_list_channels(const wire::Frame& frame) {
  wire::ListChannels msg;
  if (!wire::decode(frame, msg)) return reject(wire::Code::MalformedFrame, "malformed LIST_CHANNELS");
  if (!wire::valid_text(msg)) return reject(wire::Code::InvalidUtf8, "LIST_CHANNELS service is not valid UTF-8");
  listing_ = broker::ListingCursor{std::string(msg.service), msg.request_id};
  continue_listing();
}

void NativeSession::continue_listing() {
  for (size_t visits = 0; listing_ && !closing() && output_has_room() && visits < kListingVisitsPerTurn;
       visits += kListingPage) {
    env().router.list_channels_page(this, *listing_, kListingPage);
    if (listing_->waiting) break;  // tiered: a gateway's page is on its way (listing_page)
    if (!listing_->done) continue;
    const uint32_t request_id = listing_->request_id;
    listing_.reset();
    send_ack(request_id, {});
  }
  if (listing_ && !closing()) return begin_paced();
  end_paced();
}

void NativeSession::listing_page(uint32_t request_id, cache::ChannelId next, bool shard_done) {
  if (closing() || !listing_ || listing_->request_id != request_id || !listing_->waiting) return;
  env().router.listing_page_answered(*listing_, next, shard_done);
  if (listing_->done) return continue_listing();  // the ACK
  // The next page is asked for at the turn's end, when the output has room (pace).
}

// Rows come from this loop's router, or a page at a time from the gateways
// (tiered), only while the output has room: a client that does not read its
// listing holds a page of it, not the whole listing.
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
  if (!session::listed_for(grants(), info.topic)) return;
  if (!closing()) queue_control(info, 2 * kControlFrameMax);
}

}  // namespace tw::native
