// The reactor's turn: ready handlers, then the end-of-turn hook, and the
// turn's one clock read that handlers share.
#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <vector>

#include "base/clock.h"
#include "reactor/reactor.h"

namespace tw::reactor {
namespace {

// An eventfd made readable on demand; records the reactor's time when handled.
class Readable final : public IoHandler {
 public:
  explicit Readable(Reactor& reactor) : reactor_(reactor), fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}
  ~Readable() override { ::close(fd_); }
  void signal() {
    uint64_t one = 1;
    ASSERT_EQ(::write(fd_, &one, sizeof one), static_cast<ssize_t>(sizeof one));
  }
  void on_io(uint32_t) override {
    uint64_t count;
    [[maybe_unused]] ssize_t n = ::read(fd_, &count, sizeof count);
    seen_ns.push_back(reactor_.now_ns());
  }
  int fd() const { return fd_; }
  std::vector<uint64_t> seen_ns;

 private:
  Reactor& reactor_;
  int fd_;
};

TEST(Reactor, HandlersOfOneTurnShareTheTurnsTimeAndTheHookSeesItToo) {
  Reactor reactor;
  Readable a(reactor), b(reactor);
  ASSERT_TRUE(reactor.add(a.fd(), EPOLLIN, &a));
  ASSERT_TRUE(reactor.add(b.fd(), EPOLLIN, &b));
  std::vector<uint64_t> hook_ns;
  reactor.set_end_of_turn([&] { hook_ns.push_back(reactor.now_ns()); });
  a.signal();
  b.signal();
  uint64_t before = monotonic_ns();
  EXPECT_EQ(reactor.run_once(1000), 2);
  ASSERT_EQ(a.seen_ns.size(), 1u);
  ASSERT_EQ(b.seen_ns.size(), 1u);
  EXPECT_EQ(a.seen_ns[0], b.seen_ns[0]) << "one clock read per turn";
  ASSERT_EQ(hook_ns.size(), 1u);
  EXPECT_EQ(hook_ns[0], a.seen_ns[0]);
  EXPECT_GE(a.seen_ns[0], before);
  reactor.remove(a.fd());
  reactor.remove(b.fd());
}

TEST(Reactor, OutsideATurnNowIsTheClock) {
  Reactor reactor;
  Readable a(reactor);
  ASSERT_TRUE(reactor.add(a.fd(), EPOLLIN, &a));
  a.signal();
  reactor.run_once(1000);
  ASSERT_EQ(a.seen_ns.size(), 1u);
  uint64_t after = monotonic_ns();
  EXPECT_GE(reactor.now_ns(), after) << "not the last turn's time";
  reactor.remove(a.fd());
}

// An idle loop sleeps until its tick: a turn that waits for nothing but the
// tick ends in the tick, never in a zero-timeout wait just before it (the
// last partial millisecond used to be spun through, up to 1 ms per tick).
TEST(Reactor, AnIdleLoopSleepsUntilTheTickInsteadOfSpinningToIt) {
  Reactor reactor;
  int ticks = 0;
  reactor.set_tick(5, [&](uint64_t) { ++ticks; });
  while (ticks < 10) reactor.run_once(-1);
  EXPECT_LE(reactor.stats().turns, 2u * 10 + 1) << "turns that woke before the tick was due";
}

}  // namespace
}  // namespace tw::reactor
