#include "session/partial_input.h"

#include <algorithm>
#include <cstring>

namespace tw::session {

void PartialInput::append(std::span<const uint8_t> arrived) {
  // The protocol refuses a header that claims more than max_frame, so the
  // buffer stays below max_frame plus one read.
  if (buf_.size() < len_ + arrived.size()) buf_.resize(std::max(kMinBytes, len_ + arrived.size()));
  std::memcpy(buf_.data() + len_, arrived.data(), arrived.size());
  len_ += arrived.size();
}

void PartialInput::keep(std::span<const uint8_t> rest, bool frame_completed, uint64_t now_ns) {
  if (rest.empty()) {
    len_ = 0;
    frame_started_ns_ = 0;
    return;
  }
  if (rest.data() != buf_.data()) {
    if (buf_.size() < rest.size()) buf_.resize(std::max(kMinBytes, rest.size()));
    std::memmove(buf_.data(), rest.data(), rest.size());  // may overlap: rest can lie within the buffer
  }
  len_ = rest.size();
  if (frame_completed || frame_started_ns_ == 0) frame_started_ns_ = now_ns;
}

void PartialInput::release() {
  std::vector<uint8_t>().swap(buf_);
  len_ = 0;
  frame_started_ns_ = 0;
}

}  // namespace tw::session
