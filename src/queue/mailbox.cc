#include "queue/mailbox.h"

namespace tw::queue {

void Mailbox::post(std::vector<Letter> letters) {
  if (letters.empty()) return;
  std::lock_guard lock(mutex_);  // held while waking, so that close() waits for it
  if (closed_) return;
  for (Letter& l : letters) letters_.push_back(std::move(l));
  pending_.store(true, std::memory_order_release);
  wake_();
}

void Mailbox::close() {
  std::vector<Letter> dropped;
  std::lock_guard lock(mutex_);
  closed_ = true;
  dropped.swap(letters_);  // their ports hold this mailbox: no cycle is left behind
  pending_.store(false, std::memory_order_relaxed);
}

bool Mailbox::deliver_pending() {
  if (!pending_.load(std::memory_order_acquire)) return false;
  {
    std::lock_guard lock(mutex_);
    taken_.swap(letters_);
    pending_.store(false, std::memory_order_relaxed);
  }
  for (Letter& l : taken_) {
    if (l.port->handler != nullptr) l.port->handler->on_store_frames(l.frames, l.answered);
  }
  taken_.clear();
  return true;
}

}  // namespace tw::queue
