#include "cache/channel.h"

#include <cstring>

namespace tw::cache {

bool Channel::apply(std::span<const uint8_t> payload, bool replace, fields::Checked checked) {
  if (kind == wire::PayloadKind::Opaque) {
    // assign() reuses capacity: no allocation once the largest message was seen.
    opaque.assign(payload.begin(), payload.end());
  } else if (!(replace ? image.replace(payload, checked) : image.merge(payload, checked))) {
    return false;
  }
  attributes.clear();  // a message without any; the router keeps a publisher's after this
  ++seq;
  has_image = true;
  return true;
}

void Channel::set_retained_aside() {
  if (retained.active) return;  // the retained message is set aside already
  retained.active = true;
  retained.opaque.assign(opaque.begin(), opaque.end());
  retained.attributes.assign(attributes.begin(), attributes.end());
}

void Channel::clear_image() {
  has_image = false;
  retained.active = false;
  image.clear();
  opaque.clear();
  attributes.clear();
}

size_t Channel::image_size() const {
  return kind == wire::PayloadKind::Opaque ? opaque.size() : image.encoded_size();
}

size_t Channel::encode_image(std::span<uint8_t> out) const {
  if (kind == wire::PayloadKind::FieldList) return image.encode(out);
  if (opaque.size() > out.size()) return 0;
  if (!opaque.empty()) std::memcpy(out.data(), opaque.data(), opaque.size());
  return opaque.size();
}

}  // namespace tw::cache
