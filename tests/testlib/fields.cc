#include "testlib/fields.h"

#include <optional>

namespace tw::testing {

std::vector<uint8_t> field_list(std::initializer_list<TestField> entries) {
  return field_list(std::vector<TestField>(entries));
}

std::vector<uint8_t> field_list(const std::vector<TestField>& entries) {
  size_t capacity = 2;
  for (const TestField& f : entries) {
    capacity += 3 + 9;
    if (auto* s = std::get_if<std::string>(&f.value)) capacity += 2 + s->size();
  }
  std::vector<uint8_t> out(capacity);
  fields::FieldListWriter w(out);
  for (const TestField& f : entries) {
    if (auto* i = std::get_if<int64_t>(&f.value)) w.add_int(f.id, *i);
    if (auto* d = std::get_if<fields::Decimal>(&f.value)) w.add_decimal(f.id, *d);
    if (auto* s = std::get_if<std::string>(&f.value)) w.add_string(f.id, *s);
  }
  out.resize(w.finish());
  return out;
}

bool same_fields(const fields::FieldImage& a, const fields::FieldImage& b, std::string* why) {
  auto differ = [&](const std::string& reason) {
    if (why) *why = reason + ": " + describe(a) + " vs " + describe(b);
    return false;
  };
  if (a.fields().size() != b.fields().size()) return differ("field counts differ");
  for (size_t k = 0; k < a.fields().size(); ++k) {
    const auto& x = a.fields()[k];
    const auto& y = b.fields()[k];
    if (x.id != y.id || x.type != y.type || x.i != y.i || x.exponent != y.exponent || x.s != y.s) {
      return differ("field " + std::to_string(x.id) + " differs");
    }
  }
  return true;
}

std::optional<int64_t> int_field(const fields::FieldImage& image, uint16_t id) {
  const auto* f = image.find(id);
  if (!f || f->type != fields::FieldType::Int) return std::nullopt;
  return f->i;
}

std::optional<std::string> string_field(const fields::FieldImage& image, uint16_t id) {
  const auto* f = image.find(id);
  if (!f || f->type != fields::FieldType::String) return std::nullopt;
  return f->s;
}

std::string describe(const fields::FieldImage& image) {
  std::string s = "{";
  for (const auto& f : image.fields()) {
    if (s.size() > 1) s += ", ";
    s += std::to_string(f.id) + ":" + fields::type_name(f.type) + " ";
    if (f.type == fields::FieldType::String || f.type == fields::FieldType::Bytes) {
      s += "'" + f.s + "'";
    } else if (f.type == fields::FieldType::Decimal) {
      s += f.view().decimal().to_string();
    } else {
      s += std::to_string(f.i);
    }
  }
  return s + "}";
}

}  // namespace tw::testing
