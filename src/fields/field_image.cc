// The last-value image of a field-list channel. Fields are kept sorted by id in
// one vector so that an update to existing fields overwrites them in place:
// no node allocation, and a string reuses its capacity.
#include <algorithm>

#include "tickwire/fields/field_list.h"

namespace tw::fields {
namespace {

constexpr size_t kCountSize = 2;
constexpr size_t kEntryHeaderSize = 3;  // u16 id + u8 type

size_t value_size(const FieldImage::Field& f) {
  switch (f.type) {
    case FieldType::Int:
    case FieldType::Time: return 8;
    case FieldType::Decimal: return 9;
    case FieldType::String:
    case FieldType::Bytes: return 2 + f.s.size();
  }
  return 0;
}

void assign(FieldImage::Field& f, const FieldValue& v) {
  f.type = v.type;
  f.i = v.i;
  f.exponent = v.exponent;
  f.s.assign(v.s.data(), v.s.size());  // within capacity: no allocation
}

}  // namespace

bool FieldImage::merge(std::span<const uint8_t> payload, Checked checked) {
  if (checked == Checked::No && !validate(payload)) return false;
  for_each(payload, [this](uint16_t id, const FieldValue& v) { apply(id, v); });
  return true;
}

bool FieldImage::replace(std::span<const uint8_t> payload, Checked checked) {
  if (checked == Checked::No && !validate(payload)) return false;
  fields_.clear();
  for_each(payload, [this](uint16_t id, const FieldValue& v) {
    Field f;
    f.id = id;
    assign(f, v);
    fields_.push_back(std::move(f));
  });
  // validate() guaranteed unique ids, so a sort restores the invariant at once.
  std::sort(fields_.begin(), fields_.end(), [](const Field& a, const Field& b) { return a.id < b.id; });
  return true;
}

void FieldImage::apply(uint16_t id, const FieldValue& v) {
  auto it = std::lower_bound(fields_.begin(), fields_.end(), id,
                             [](const Field& f, uint16_t key) { return f.id < key; });
  if (it == fields_.end() || it->id != id) {
    it = fields_.insert(it, Field{});
    it->id = id;
  }
  assign(*it, v);
}

const FieldImage::Field* FieldImage::find(uint16_t id) const {
  auto it = std::lower_bound(fields_.begin(), fields_.end(), id,
                             [](const Field& f, uint16_t key) { return f.id < key; });
  return it != fields_.end() && it->id == id ? &*it : nullptr;
}

size_t FieldImage::encoded_size() const {
  size_t size = kCountSize;
  for (const auto& f : fields_) size += kEntryHeaderSize + value_size(f);
  return size;
}

size_t FieldImage::encode(std::span<uint8_t> out) const {
  FieldListWriter w(out);
  for (const auto& f : fields_) w.add(f.id, f.view());
  return w.finish();
}

}  // namespace tw::fields
