#include "session/handshaker.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/affinity.h"
#include "base/log.h"
#include "base/rate_limit.h"

namespace tw::session {

namespace {
constexpr int kTickMs = 50;          // how often timeouts are checked
constexpr int kNiceness = 10;        // below the loops, which must preempt it
constexpr int kMaxEvents = 256;
}  // namespace

Handshaker::Handshaker(uint32_t timeout_ms, std::function<void()> on_failed)
    : timeout_ns_(uint64_t{timeout_ms} * 1'000'000), on_failed_(std::move(on_failed)) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event ev{EPOLLIN, {.fd = wake_fd_}};
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
}

Handshaker::~Handshaker() {
  stop();
  ::close(wake_fd_);
  ::close(epoll_fd_);
}

void Handshaker::start() {
  thread_ = std::thread([this] {
    lower_current_thread_priority(kNiceness, "TLS handshake thread");
    run();
  });
}

void Handshaker::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_relaxed);
  uint64_t one = 1;
  (void)::write(wake_fd_, &one, sizeof one);
  thread_.join();
  take_new();
  for (size_t i = 0; i < pending_.size(); ++i) on_failed_();
  pending_.clear();
}

void Handshaker::add(std::unique_ptr<Transport> transport, std::string peer, Ready ready) {
  {
    std::lock_guard lock(inbox_mutex_);
    inbox_.push_back({std::move(transport), std::move(peer), std::move(ready), 0});
  }
  uint64_t one = 1;
  (void)::write(wake_fd_, &one, sizeof one);
}

void Handshaker::run() {
  epoll_event events[kMaxEvents];
  uint64_t next_expiry = monotonic_ns();
  while (!stop_.load(std::memory_order_relaxed)) {
    int n = ::epoll_wait(epoll_fd_, events, kMaxEvents, kTickMs);
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == wake_fd_) {
        uint64_t count;
        (void)::read(wake_fd_, &count, sizeof count);
        take_new();
      } else {
        advance(events[i].data.fd);
      }
    }
    const uint64_t now = monotonic_ns();
    if (now >= next_expiry) {
      expire(now);
      next_expiry = now + kTickMs * 1'000'000ull;
    }
  }
}

void Handshaker::take_new() {
  std::vector<Pending> taken;
  {
    std::lock_guard lock(inbox_mutex_);
    taken.swap(inbox_);
  }
  const uint64_t deadline = monotonic_ns() + timeout_ns_;
  for (Pending& p : taken) {
    const int fd = p.transport->fd();
    p.deadline_ns = deadline;
    pending_.emplace(fd, std::move(p));
    watch(fd, EPOLLIN, false);
    if (!stop_.load(std::memory_order_relaxed)) advance(fd);  // the ClientHello may be here already
  }
}

void Handshaker::advance(int fd) {
  auto it = pending_.find(fd);
  if (it == pending_.end()) return;
  Pending& p = it->second;
  switch (p.transport->handshake()) {
    case Handshake::Done: {
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
      Pending done = std::move(p);
      pending_.erase(it);
      done.ready(std::move(done.transport), std::move(done.peer));
      return;
    }
    case Handshake::WantRead: return watch(fd, EPOLLIN, true);
    case Handshake::WantWrite: return watch(fd, EPOLLOUT, true);
    case Handshake::Failed:
      return drop(fd, std::string(p.transport->kind()) + " handshake failed: " + p.transport->error_text());
  }
}

void Handshaker::expire(uint64_t now_ns) {
  std::vector<int> late;
  for (const auto& [fd, p] : pending_) {
    if (now_ns > p.deadline_ns) late.push_back(fd);
  }
  for (int fd : late) drop(fd, std::string(pending_[fd].transport->kind()) + " handshake not completed in time");
}

void Handshaker::drop(int fd, const std::string& why) {
  auto it = pending_.find(fd);
  TW_WARN_LIMITED("session %s closed: %s", it->second.peer.c_str(), why.c_str());
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  it->second.transport->shutdown();
  pending_.erase(it);  // closes the fd
  on_failed_();
}

void Handshaker::watch(int fd, uint32_t events, bool added) {
  epoll_event ev{events, {.fd = fd}};
  ::epoll_ctl(epoll_fd_, added ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev);
}

}  // namespace tw::session
