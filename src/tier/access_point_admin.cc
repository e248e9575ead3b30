// What an access point tells the admin side about its connections, and the
// admin's disconnect (docs/operations.md). Runs on the loop thread, from a
// LoopInbox job.
#include "base/clock.h"
#include "tier/access_point.h"

namespace tw::tier {

namespace {

ConnectionInfo describe(const session::Session& s, broker::Router& router, uint64_t max_output, uint64_t now_ns) {
  ConnectionInfo info;
  info.token = s.token;
  info.client = s.client_name();
  info.peer = s.peer();
  if (s.grants() != nullptr) info.user = s.grants()->user();
  info.protocol = std::string(s.protocol_name());
  info.transport = std::string(s.transport_kind());
  info.subscriptions = static_cast<uint32_t>(router.subscription_count(const_cast<session::Session*>(&s)));
  const session::Session::Traffic t = s.traffic();
  info.msgs_in = t.frames_in;
  info.bytes_in = t.bytes_in;
  info.msgs_out = t.messages_out;
  info.bytes_out = t.bytes_out;
  info.queued_bytes = s.queued_output();
  info.lagging_channels = s.lagging_channels();
  info.slow = info.lagging_channels > 0 || info.queued_bytes > max_output;
  info.dropped_messages = s.slow_stats().dropped_messages;
  info.connected_ms = (now_ns - s.opened_ns()) / 1'000'000;
  return info;
}

}  // namespace

void AccessPoint::describe_connections(uint32_t loop_index, std::vector<ConnectionInfo>& out) {
  const uint64_t now = monotonic_ns();
  for (auto& [token, session] : sessions_) {
    if (session->closing()) continue;
    out.push_back(describe(*session, router_, config_.limits.max_output_buffer, now));
    out.back().loop = loop_index;
  }
}

std::optional<ConnectionSubscriptions> AccessPoint::describe_subscriptions(uint32_t token) {
  auto it = sessions_.find(token);
  if (it == sessions_.end() || it->second->closing()) return std::nullopt;
  ConnectionSubscriptions out;
  if (it->second->grants() != nullptr) out.user = it->second->grants()->user();
  out.patterns = router_.subscriptions_of(it->second.get());
  return out;
}

bool AccessPoint::disconnect(uint32_t token, wire::Code code, std::string_view why) {
  auto it = sessions_.find(token);
  if (it == sessions_.end() || it->second->closing()) return false;
  it->second->fail(code, why, /*warn=*/true);
  return true;
}

}  // namespace tw::tier
