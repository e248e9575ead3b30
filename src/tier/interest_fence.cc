#include "tier/interest_fence.h"

namespace tw::tier {

bool InterestFence::clear(std::vector<uint64_t>& ticket) const {
  bool in_flight = false;
  for (const Link* link : others_) {
    if (link->interests_applied.load(std::memory_order_acquire) <
        link->interests_sent.load(std::memory_order_acquire)) {
      in_flight = true;
      break;
    }
  }
  if (!in_flight) return true;
  ticket.resize(others_.size());  // allocates at a connection's first wait only
  for (size_t i = 0; i < others_.size(); ++i) ticket[i] = others_[i]->interests_sent.load(std::memory_order_acquire);
  return false;
}

bool InterestFence::reached(const std::vector<uint64_t>& ticket) const {
  for (size_t i = 0; i < others_.size() && i < ticket.size(); ++i) {
    if (others_[i]->interests_applied.load(std::memory_order_acquire) < ticket[i]) return false;
  }
  return true;
}

}  // namespace tw::tier
