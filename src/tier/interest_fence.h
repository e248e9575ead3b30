// InterestFence: an access point's PublishFence (session/publish_fence.h).
// It reads the Interest counts of the other access points' links
// (Link::interests_sent, interests_applied): a publish read here waits until
// every gateway has applied what the others had sent when it was read. Both
// counts only grow, each with one writer; a publish with nothing in flight
// elsewhere reads two words per link and goes on.
#pragma once
#include <vector>

#include "session/publish_fence.h"
#include "tier/link.h"

namespace tw::tier {

class InterestFence final : public session::PublishFence {
 public:
  // `others`: every link between a gateway and another access point.
  explicit InterestFence(std::vector<const Link*> others) : others_(std::move(others)) {}

  bool clear(std::vector<uint64_t>& ticket) const override;
  bool reached(const std::vector<uint64_t>& ticket) const override;

 private:
  std::vector<const Link*> others_;
};

}  // namespace tw::tier
