// The end-of-turn flush: every dirty outlet once, and no outlet always last.
#include <gtest/gtest.h>

#include <vector>

#include "output/fanout.h"

namespace tw::output {
namespace {

// Records the order in which the fanout flushes it among its peers.
class OrderOutlet final : public Flushable {
 public:
  OrderOutlet(int id, std::vector<int>& order) : id_(id), order_(order) {}
  void flush_output() override { order_.push_back(id_); }

 private:
  int id_;
  std::vector<int>& order_;
};

TEST(Fanout, EachFlushStartsOneFurtherAlongSoNoOutletIsAlwaysLast) {
  Fanout fanout(4096);
  std::vector<int> order;
  std::vector<OrderOutlet> outlets;
  outlets.reserve(3);  // the fanout holds pointers
  for (int id = 0; id < 3; ++id) outlets.emplace_back(id, order);
  std::vector<int> last_count(3, 0);
  for (int turn = 0; turn < 6; ++turn) {
    for (OrderOutlet& o : outlets) fanout.mark_dirty(&o);  // a channel's subscribers, always in one order
    fanout.mark_dirty(&outlets[1]);                        // twice in a turn: still flushed once
    order.clear();
    fanout.flush_all();
    ASSERT_EQ(order.size(), 3u) << "turn " << turn;
    EXPECT_EQ(order[0], turn % 3) << "turn " << turn;
    ++last_count[order.back()];
    for (const OrderOutlet& o : outlets) EXPECT_FALSE(o.dirty);
  }
  EXPECT_EQ(last_count, std::vector<int>({2, 2, 2}));
  order.clear();
  fanout.flush_all();
  EXPECT_TRUE(order.empty()) << "nothing dirty, nothing flushed";
}

TEST(Fanout, AForgottenOutletIsNotFlushed) {
  Fanout fanout(4096);
  std::vector<int> order;
  OrderOutlet a(0, order), b(1, order);
  fanout.mark_dirty(&a);
  fanout.mark_dirty(&b);
  fanout.forget(&a);
  fanout.flush_all();
  EXPECT_EQ(order, std::vector<int>({1}));
}

// A slow consumer's flush can queue more of its own output (the refreshes
// it held back, once drained to its low-water mark): it stays listed, so its
// next flush comes with the next turn's, not only when its socket is writable.
class Relisting final : public Flushable {
 public:
  explicit Relisting(Fanout& fanout) : fanout_(fanout) {}
  void flush_output() override {
    ++flushes;
    if (flushes == 1) fanout_.mark_dirty(this);  // the resumed refreshes
  }
  int flushes = 0;

 private:
  Fanout& fanout_;
};

TEST(Fanout, AnOutletThatListsItselfDuringItsFlushIsFlushedAgainNextTime) {
  Fanout fanout(4096);
  Relisting slow(fanout);
  std::vector<int> order;
  OrderOutlet other(7, order);
  fanout.mark_dirty(&slow);
  fanout.mark_dirty(&other);
  fanout.flush_all();
  EXPECT_EQ(slow.flushes, 1);
  EXPECT_TRUE(slow.dirty) << "listed again by its own flush";
  fanout.flush_all();
  EXPECT_EQ(slow.flushes, 2) << "its refreshes were flushed with the next turn";
  EXPECT_FALSE(slow.dirty);
  // Listed again later (a new message queued by reference), it is flushed as any other.
  fanout.mark_dirty(&slow);
  fanout.flush_all();
  EXPECT_EQ(slow.flushes, 3);
  EXPECT_EQ(order, std::vector<int>({7}));
}

}  // namespace
}  // namespace tw::output
