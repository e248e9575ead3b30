#include "reactor/reactor.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/clock.h"

namespace tw::reactor {

namespace {
constexpr int kMaxEvents = 256;
// The waker's handler pointer: a sentinel never dereferenced.
IoHandler* const kWakeTag = reinterpret_cast<IoHandler*>(uintptr_t{1});
}  // namespace

Reactor::Reactor() {
  epfd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = kWakeTag;
  ::epoll_ctl(epfd_, EPOLL_CTL_ADD, wake_fd_, &ev);
}

Reactor::~Reactor() {
  ::close(wake_fd_);
  ::close(epfd_);
}

Status Reactor::add(int fd, uint32_t events, IoHandler* handler) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = handler;
  if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) != 0) return Error{std::string("epoll add: ") + std::strerror(errno)};
  return Ok{};
}

Status Reactor::modify(int fd, uint32_t events, IoHandler* handler) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = handler;
  if (::epoll_ctl(epfd_, EPOLL_CTL_MOD, fd, &ev) != 0) return Error{std::string("epoll mod: ") + std::strerror(errno)};
  return Ok{};
}

void Reactor::remove(int fd) { ::epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr); }

void Reactor::set_tick(uint32_t tick_ms, std::function<void(uint64_t)> tick) {
  tick_ms_ = tick_ms == 0 ? 1 : tick_ms;
  tick_ = std::move(tick);
  next_tick_ns_ = monotonic_ns() + tick_ms_ * 1'000'000ull;
}

void Reactor::wake() {
  uint64_t one = 1;
  ssize_t rc = ::write(wake_fd_, &one, sizeof one);
  (void)rc;  // a full eventfd counter already means "woken"
}

bool Reactor::consume_wakeup() {
  bool was = woken_;
  woken_ = false;
  return was;
}

uint64_t Reactor::now_ns() const { return turn_start_ns_ != 0 ? turn_start_ns_ : monotonic_ns(); }

int Reactor::run_once(int max_wait_ms) {
  owner_.check("Reactor");
  uint64_t now = monotonic_ns();
  int wait_ms = max_wait_ms;
  if (tick_) {
    // Rounded up: rounding down would make the last millisecond before each
    // tick a busy loop of zero-timeout waits.
    int64_t until_tick_ns = static_cast<int64_t>(next_tick_ns_ - now);
    int64_t until_tick = until_tick_ns <= 0 ? 0 : (until_tick_ns + 999'999) / 1'000'000;
    if (wait_ms < 0 || until_tick < wait_ms) wait_ms = static_cast<int>(until_tick);
  }
  epoll_event events[kMaxEvents];
  int n = ::epoll_wait(epfd_, events, kMaxEvents, wait_ms);
  if (n < 0) n = 0;  // EINTR: treat as an empty turn
  uint64_t start = monotonic_ns();
  turn_start_ns_ = start;
  for (int i = 0; i < n; ++i) {
    auto* handler = static_cast<IoHandler*>(events[i].data.ptr);
    if (handler == kWakeTag) {
      uint64_t count = 0;
      ssize_t rc = ::read(wake_fd_, &count, sizeof count);
      (void)rc;
      woken_ = true;
      continue;
    }
    handler->on_io(events[i].events);
  }
  if (end_of_turn_) end_of_turn_();
  turn_start_ns_ = 0;
  uint64_t end = monotonic_ns();
  if (tick_ && end >= next_tick_ns_) {
    next_tick_ns_ = end + tick_ms_ * 1'000'000ull;
    tick_(end);
    end = monotonic_ns();
  }
  stats_.turns++;
  stats_.events += static_cast<uint64_t>(n);
  uint64_t turn_ns = end - start;
  if (turn_ns > stats_.max_turn_ns) stats_.max_turn_ns = turn_ns;
  if (turn_ns > slow_turn_ns) stats_.slow_turns++;
  stats_.busy_ns += turn_ns;
  return n;
}

}  // namespace tw::reactor
