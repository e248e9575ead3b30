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

}  // namespace
}  // namespace tw::output
