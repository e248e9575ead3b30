// Interactive providing (PROVIDE / REQUEST / RELEASE / stream publishing) and
// channel listing (LIST_CHANNELS / CHANNEL_INFO).
#include <algorithm>
#include <string>

#include "base/clock.h"
#include "tickwire/client/client.h"
#include "topic/topic.h"

namespace tw::client {

namespace {

constexpr uint64_t kNsPerMs = 1'000'000;

}  // namespace

Client::Provision* Client::live_provision(std::string_view service) {
  for (auto& p : provisions_)
    if (p->live && p->service == service) return p.get();
  return nullptr;
}

Client::Provision* Client::provision_by_id(uint32_t id) {
  for (auto& p : provisions_)
    if (p->id == id) return p.get();
  return nullptr;
}

void Client::send_provide(const Provision& provision) {
  if (state_ != State::Connected) return;  // sent by resend_state() after WELCOME
  uint32_t request_id = next_request_id_++;
  wire::Provide m{request_id, provision.service, provision.pattern};
  bool queued = queue_frame(wire::kHeaderSize + 8 + provision.service.size() + provision.pattern.size(),
                            [&](std::span<uint8_t> out) { return wire::encode(out, m); });
  if (!queued) {
    connection_lost("output buffer full while sending PROVIDE");
    return;
  }
  pending_[request_id] = PendingRequest{RequestType::Provide, provision.service};
}

Result<uint32_t> Client::provide(std::string_view service, std::string_view pattern, RequestHandler on_request,
                                 ReleaseHandler on_release) {
  if (!on_request) return Error{"provide needs a request handler"};
  if (service.find('/') != std::string_view::npos ||
      topic::validate_topic(service, topic::Limits{}) != topic::Error::Ok)
    return Error{"invalid service '" + std::string(service) + "': a service is one valid topic level"};
  if (!pattern.empty()) {
    topic::Error e = topic::validate_pattern(pattern, topic::Limits{});
    if (e != topic::Error::Ok)
      return Error{"invalid pattern '" + std::string(pattern) + "': " + topic::describe(e)};
    if (topic::service_of(pattern) != service)
      return Error{"pattern '" + std::string(pattern) + "' must start with the service level '" +
                   std::string(service) + "'"};
  }
  if (live_provision(service) != nullptr) return Error{"already providing '" + std::string(service) + "'"};
  auto p = std::make_unique<Provision>();
  p->id = next_provision_id_++;
  p->service.assign(service);
  p->pattern.assign(pattern);
  p->on_request = std::move(on_request);
  p->on_release = std::move(on_release);
  provisions_.push_back(std::move(p));
  send_provide(*provisions_.back());
  return provisions_.back()->id;
}

Status Client::withdraw(std::string_view service) {
  Provision* p = live_provision(service);
  if (p == nullptr) return Error{"not providing '" + std::string(service) + "'"};
  retire(*p);
  std::erase_if(streams_, [id = p->id](const auto& entry) { return entry.second.provision_id == id; });
  if (state_ == State::Connected) {
    uint32_t request_id = next_request_id_++;
    wire::Withdraw m{request_id, service};
    if (!queue_frame(wire::kHeaderSize + 6 + service.size(),
                     [&](std::span<uint8_t> out) { return wire::encode(out, m); })) {
      connection_lost("output buffer full while sending WITHDRAW");
    } else {
      pending_[request_id] = PendingRequest{RequestType::Withdraw, std::string(service)};
    }
  }
  sweep_subscriptions();
  return Ok{};
}

Status Client::publish_stream(uint32_t stream_id, std::span<const uint8_t> payload, bool image) {
  if (state_ != State::Connected) {
    ++counters_.publish_rejected;
    return Error{"not connected"};
  }
  if (streams_.find(stream_id) == streams_.end()) {
    ++counters_.publish_rejected;
    return Error{"stream " + std::to_string(stream_id & ~wire::kStreamIdBit) + " is not open"};
  }
  size_t size = wire::kPublishFixedSize + payload.size();
  if (server_.max_frame != 0 && size > server_.max_frame) {
    ++counters_.publish_rejected;
    return Error{"payload exceeds the broker's max_frame"};
  }
  wire::Publish m{stream_id, image, payload};
  if (!queue_frame(size, [&](std::span<uint8_t> out) { return wire::encode(out, m); })) {
    ++counters_.publish_rejected;
    return Error{"output buffer full (back pressure): poll() or flush() and retry"};
  }
  ++counters_.published;
  return Ok{};
}

bool Client::send_stream_status(uint32_t stream_id, wire::ChannelState state, wire::Code code,
                                std::string_view text) {
  wire::StreamStatus m{stream_id, state, code, text};
  return queue_frame(wire::kHeaderSize + 9 + text.size(),
                     [&](std::span<uint8_t> out) { return wire::encode(out, m); });
}

Status Client::stream_status(uint32_t stream_id, wire::ChannelState state, wire::Code code, std::string_view text) {
  if (state_ != State::Connected) return Error{"not connected"};
  auto it = streams_.find(stream_id);
  if (it == streams_.end()) return Error{"stream " + std::to_string(stream_id & ~wire::kStreamIdBit) + " is not open"};
  if (!send_stream_status(stream_id, state, code, text))
    return Error{"output buffer full (back pressure): poll() or flush() and retry"};
  if (state == wire::ChannelState::Closed) streams_.erase(it);
  return Ok{};
}

Status Client::channel_status(PublisherId id, wire::ChannelState state, wire::Code code, std::string_view text) {
  if (state_ != State::Connected) return Error{"not connected"};
  if (state == wire::ChannelState::Closed) return Error{"a publisher may say STALE or OK only"};
  if (id == 0 || id > registrations_.size()) return Error{"not an advertised publish id"};
  if (!send_stream_status(id, state, code, text))
    return Error{"output buffer full (back pressure): poll() or flush() and retry"};
  return Ok{};
}

int Client::handle_request(const wire::Request& request) {
  ++counters_.requests;
  Provision* p = live_provision(topic::service_of(request.topic));
  if (p == nullptr) {  // withdrawn while the REQUEST was in flight
    if (!send_stream_status(request.stream_id, wire::ChannelState::Closed, wire::Code::NotFound,
                            "service not provided by this client"))
      connection_lost("output buffer full while refusing a REQUEST");
    return 0;
  }
  OpenStream& s = streams_[request.stream_id];
  s.provision_id = p->id;
  s.topic.assign(request.topic);
  ++dispatch_depth_;
  p->on_request(Stream{request.stream_id, request.topic});
  --dispatch_depth_;
  return 1;
}

void Client::call_release(uint32_t stream_id, const OpenStream& stream) {
  Provision* p = provision_by_id(stream.provision_id);
  if (p == nullptr || !p->live || !p->on_release) return;
  ++dispatch_depth_;
  p->on_release(Stream{stream_id, stream.topic});
  --dispatch_depth_;
}

int Client::handle_release(const wire::ReleaseMsg& release) {
  auto it = streams_.find(release.stream_id);
  if (it == streams_.end()) return 0;  // already closed by this client, or withdrawn
  OpenStream stream = std::move(it->second);
  streams_.erase(it);
  ++counters_.releases;
  call_release(release.stream_id, stream);
  return 1;
}

void Client::end_streams_on_loss() {
  if (streams_.empty()) return;
  auto lost = std::move(streams_);
  streams_.clear();
  counters_.streams_lost += lost.size();
  for (const auto& [id, stream] : lost) call_release(id, stream);
}

bool Client::handle_provider_ack(const PendingRequest& request, const wire::Ack& ack) {
  switch (request.type) {
    case RequestType::ListChannels:
      if (list_wait_ != nullptr && list_wait_->request_id == ack.request_id) {
        list_wait_->done = true;
        list_wait_->code = ack.code;
        list_wait_->text.assign(ack.text);
      }
      return true;
    case RequestType::Provide:
      if (ack.code != wire::Code::Ok) {
        if (Provision* p = live_provision(request.subject)) {
          retire(*p);
          std::erase_if(streams_, [id = p->id](const auto& entry) { return entry.second.provision_id == id; });
        }
      }
      return false;  // a refusal is reported through on_error by the caller
    default:
      return false;
  }
}

void Client::handle_channel_info(const wire::ChannelInfo& info) {
  if (list_wait_ == nullptr || list_wait_->request_id != info.request_id) return;
  list_wait_->rows.push_back(ChannelRow{info.channel_id, std::string(info.topic), info.state, info.subscribers,
                                        info.seq, info.rate, std::string(info.provider)});
}

Result<std::vector<ChannelRow>> Client::list_channels(std::string_view service, int timeout_ms) {
  if (dispatch_depth_ > 0 || in_poll_) return Error{"list_channels() cannot be called from a callback"};
  if (state_ != State::Connected) return Error{"not connected"};
  ListWait wait;
  wait.request_id = next_request_id_++;
  wire::ListChannels m{wait.request_id, service};
  if (!queue_frame(wire::kHeaderSize + 6 + service.size(),
                   [&](std::span<uint8_t> out) { return wire::encode(out, m); }))
    return Error{"output buffer full"};
  pending_[wait.request_id] = PendingRequest{RequestType::ListChannels, std::string(service)};
  list_wait_ = &wait;
  uint64_t epoch = epoch_;
  uint64_t deadline = monotonic_ns() + static_cast<uint64_t>(std::max(timeout_ms, 0)) * kNsPerMs;
  in_poll_ = true;
  while (!wait.done && epoch == epoch_ && monotonic_ns() < deadline) run_once(deadline);
  in_poll_ = false;
  list_wait_ = nullptr;
  pending_.erase(wait.request_id);
  sweep_subscriptions();
  if (epoch != epoch_) return Error{"connection lost while listing channels: " + last_failure_};
  if (!wait.done) return Error{"listing channels timed out"};
  if (wait.code != wire::Code::Ok)
    return Error{std::string("listing channels refused: ") + wire::code_name(wait.code) + " " + wait.text};
  return std::move(wait.rows);
}

}  // namespace tw::client
