#include "session/input_budget.h"

namespace tw::session {

void InputBudget::set(Holder& holder, size_t bytes) {
  total_ = total_ - holder.held_ + bytes;
  holder.held_ = bytes;
  if (bytes == 0) return unlink(holder);
  if (holder.slot_ == kNoSlot) {
    holder.slot_ = holders_.size();
    holders_.push_back(&holder);
  }
}

void InputBudget::unlink(Holder& holder) {
  if (holder.slot_ == kNoSlot) return;
  Holder* last = holders_.back();
  holders_[holder.slot_] = last;
  last->slot_ = holder.slot_;
  holders_.pop_back();
  holder.slot_ = kNoSlot;
}

InputBudget::Holder* InputBudget::largest() const {
  Holder* best = nullptr;
  for (Holder* h : holders_) {
    if (!best || h->held_ > best->held_) best = h;
  }
  return best;
}

size_t InputBudget::enforce() {
  size_t evicted = 0;
  while (total_ > limit_ && !holders_.empty()) {
    Holder* victim = largest();
    set(*victim, 0);  // forgotten first: give_up_input may report 0 again, harmlessly
    victim->give_up_input();
    ++evicted;
  }
  return evicted;
}

}  // namespace tw::session
