// RawClient requests of interactive providers (PROVIDE, WITHDRAW,
// STREAM_STATUS) and of administration (LIST_CHANNELS).
#include <chrono>

#include "testlib/raw_client.h"

namespace tw::testing {

namespace {
constexpr size_t kStr16Max = 2 + 0xFFFF;
constexpr size_t kControlFrameMax = wire::kHeaderSize + 16 + 2 * kStr16Max;

ChannelInfoRow copy_row(const wire::ChannelInfo& info) {
  return {info.channel_id, info.state,           info.subscribers,
          info.seq,        std::string(info.topic), std::string(info.provider)};
}
}  // namespace

bool RawClient::send_provide(uint32_t request_id, std::string_view service, std::string_view pattern) {
  wire::Provide m{request_id, service, pattern};
  return send_encoded([&](std::span<uint8_t> out) { return wire::encode(out, m); }, kControlFrameMax);
}

bool RawClient::send_withdraw(uint32_t request_id, std::string_view service) {
  wire::Withdraw m{request_id, service};
  return send_encoded([&](std::span<uint8_t> out) { return wire::encode(out, m); }, kControlFrameMax);
}

bool RawClient::send_stream_status(uint32_t stream_id, wire::ChannelState state, wire::Code code,
                                   std::string_view text) {
  wire::StreamStatus m{stream_id, state, code, text};
  return send_encoded([&](std::span<uint8_t> out) { return wire::encode(out, m); }, kControlFrameMax);
}

bool RawClient::send_list_channels(uint32_t request_id, std::string_view service) {
  wire::ListChannels m{request_id, service};
  return send_encoded([&](std::span<uint8_t> out) { return wire::encode(out, m); }, kControlFrameMax);
}

std::optional<AckReply> RawClient::provide(uint32_t request_id, std::string_view service, std::string_view pattern,
                                           int timeout_ms) {
  if (!send_provide(request_id, service, pattern)) return std::nullopt;
  return await_ack(request_id, timeout_ms);
}

std::optional<AckReply> RawClient::withdraw(uint32_t request_id, std::string_view service, int timeout_ms) {
  if (!send_withdraw(request_id, service)) return std::nullopt;
  return await_ack(request_id, timeout_ms);
}

ListReply RawClient::list_channels(uint32_t request_id, std::string_view service, int timeout_ms) {
  if (!send_list_channels(request_id, service)) return {};
  return list_channels_reply(request_id, timeout_ms);
}

ListReply RawClient::list_channels_reply(uint32_t request_id, int timeout_ms) {
  ListReply reply;
  reply.ack = read_until_ack(request_id, timeout_ms, [&](OwnedFrame& f, std::deque<OwnedFrame>&) {
    auto info = f.as<wire::ChannelInfo>();
    if (!info || info->request_id != request_id) return false;
    reply.rows.push_back(copy_row(*info));
    return true;
  });
  return reply;
}

void RawClient::keep_in_front(std::deque<OwnedFrame>& frames) {
  while (!frames.empty()) {
    kept_.push_front(std::move(frames.back()));
    frames.pop_back();
  }
}

}  // namespace tw::testing
