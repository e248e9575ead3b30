#include "testlib/provider.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "testlib/fields.h"

namespace tw::testing {

namespace {
using Clock = std::chrono::steady_clock;
constexpr int kChildHeartbeatMs = 100;

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}
}  // namespace

std::vector<std::string> interactive_args(const InteractiveTimeouts& t) {
  return {"--request-timeout-ms", std::to_string(t.request_timeout_ms),
          "--release-linger-ms",  std::to_string(t.release_linger_ms),
          "--not-found-ttl-ms",   std::to_string(t.not_found_ttl_ms)};
}

std::vector<uint8_t> provider_image(uint32_t stream_id, const std::string& tag) {
  return field_list({{1, static_cast<int64_t>(stream_id & ~wire::kStreamIdBit)}, {2, tag}});
}

std::vector<uint8_t> provider_update(int64_t number) { return field_list({{3, number}}); }

bool ProviderClient::open(uint16_t port, const std::string& name, uint32_t heartbeat_ms, std::string* why) {
  name_ = name;
  if (!client_.connect(port)) {
    if (why) *why = "cannot connect to port " + std::to_string(port);
    return false;
  }
  auto welcome = client_.hello(name, heartbeat_ms);
  if (!welcome || welcome->type() != wire::MsgType::Welcome) {
    if (why) *why = welcome ? "expected WELCOME, got " + describe(*welcome) : "no answer to HELLO";
    return false;
  }
  return true;
}

std::optional<ProviderEvent> ProviderClient::next_event(int timeout_ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto f = client_.next(remaining_ms(deadline));
    if (!f) return std::nullopt;
    if (auto request = f->as<wire::Request>()) {
      requests_.push_back({ProviderEvent::Kind::Request, request->stream_id, std::string(request->topic)});
      return requests_.back();
    }
    if (auto release = f->as<wire::ReleaseMsg>()) {
      releases_.push_back(release->stream_id);
      return ProviderEvent{ProviderEvent::Kind::Release, release->stream_id, {}};
    }
  }
}

bool ProviderClient::read_requests(size_t count, int timeout_ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (requests_.size() < count) {
    if (!next_event(remaining_ms(deadline))) return false;
  }
  return true;
}

bool ProviderClient::answer_all() {
  for (; answered_ < requests_.size(); ++answered_) {
    if (!answer(requests_[answered_].stream_id)) return false;
  }
  return true;
}

ForkedProvider::ForkedProvider(ForkedProviderOptions options) : options_(std::move(options)) {
  int down[2];
  int up[2];
  if (::pipe2(down, O_CLOEXEC) != 0) return;
  if (::pipe2(up, O_CLOEXEC) != 0) {
    ::close(down[0]);
    ::close(down[1]);
    return;
  }
  pid_ = ::fork();
  if (pid_ == 0) {
    ::close(down[1]);
    ::close(up[0]);
    to_child_ = down[0];  // in the child: where the port comes from
    from_child_ = up[1];  // in the child: where readiness goes
    run_child();
  }
  ::close(down[0]);
  ::close(up[1]);
  to_child_ = down[1];
  from_child_ = up[0];
}

ForkedProvider::~ForkedProvider() {
  kill();
  if (to_child_ >= 0) ::close(to_child_);
  if (from_child_ >= 0) ::close(from_child_);
}

bool ForkedProvider::start(uint16_t port, int timeout_ms) {
  if (pid_ <= 0) return false;
  if (::write(to_child_, &port, sizeof port) != static_cast<ssize_t>(sizeof port)) return false;
  pollfd p{from_child_, POLLIN, 0};
  char answer = 0;
  if (::poll(&p, 1, timeout_ms) != 1 || ::read(from_child_, &answer, 1) != 1) return false;
  return answer == 'R';
}

void ForkedProvider::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

// The child: never returns into the test framework, only _exit().
void ForkedProvider::run_child() {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  uint16_t port = 0;
  if (::read(to_child_, &port, sizeof port) != static_cast<ssize_t>(sizeof port)) ::_exit(2);
  ProviderClient provider;
  auto acked = [&] {
    auto ack = provider.provide(1, options_.service, options_.pattern);
    return ack && ack->code == wire::Code::Ok;
  };
  const bool ready = provider.open(port, options_.name) && acked();
  char answer = ready ? 'R' : 'F';
  if (::write(from_child_, &answer, 1) != 1 || !ready) ::_exit(3);
  auto last_heartbeat = Clock::now();
  int64_t updates = 0;
  for (;;) {
    if (Clock::now() - last_heartbeat >= std::chrono::milliseconds(kChildHeartbeatMs)) {
      if (!provider.raw().send_heartbeat()) ::_exit(0);
      last_heartbeat = Clock::now();
    }
    auto event = provider.next_event(kChildHeartbeatMs);
    if (!event) {
      if (provider.raw().closed_by_peer()) ::_exit(0);
      continue;
    }
    if (!event->is_request()) continue;
    if (!provider.answer(event->stream_id)) ::_exit(4);
    for (int i = 0; i < options_.updates_per_request; ++i) {
      if (!provider.send_update(event->stream_id, provider_update(++updates))) ::_exit(4);
    }
  }
}

}  // namespace tw::testing
