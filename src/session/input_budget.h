// InputBudget: the bytes one loop's sessions hold in their own input buffers
// (a frame that has begun to arrive but is not whole yet), against a limit.
// A session reads into the loop's shared read buffer and keeps only what is
// left over after parsing, so an idle connection holds nothing; this budget
// bounds what all the partial frames together can pin (a client that sends
// the first bytes of a frame claiming max_frame pins only what it sent, and
// a thousand of them pin at most the budget).
//
// Past the limit, the holders with the most bytes give them up, largest
// first, until the total fits again: a holder without a partial frame only
// frees its spare buffer; one with a partial frame closes (its client sees
// the error the holder chose). Finding the largest scans the holders, only
// when the limit is passed.
//
// Owned by one loop thread.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tw::session {

class InputBudget {
 public:
  class Holder {
   public:
    virtual ~Holder() = default;
    size_t held_bytes() const { return held_; }

   protected:
    // Told by the budget, which has already stopped counting this holder's
    // bytes: free the buffer, and close if it held a partial frame.
    virtual void give_up_input() = 0;

   private:
    friend class InputBudget;
    size_t held_ = 0;
    size_t slot_ = kNoSlot;
  };
  static constexpr size_t kNoSlot = ~size_t{0};

  explicit InputBudget(size_t limit) : limit_(limit) {}

  // Records that `holder` now holds `bytes` (0: it holds nothing and is forgotten).
  void set(Holder& holder, size_t bytes);
  // While over the limit, the largest holders give up their input; returns how many did.
  size_t enforce();

  size_t held() const { return total_; }
  size_t limit() const { return limit_; }
  size_t holders() const { return holders_.size(); }

 private:
  void unlink(Holder& holder);
  Holder* largest() const;

  size_t limit_;
  size_t total_ = 0;
  std::vector<Holder*> holders_;  // every holder with bytes, in no order
};

}  // namespace tw::session
