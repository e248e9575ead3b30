// Fuzzes field-list validation and the last-value image merge. For any bytes:
// validate() and FieldImage::merge() must agree; a rejected payload must leave
// the image unchanged; an accepted one must give an image whose encoding is
// itself valid and re-encodes byte-identically after replace(). why_invalid()
// agrees with validate(), and an accepted payload's STRING values are UTF-8.
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "tickwire/fields/field_list.h"
#include "wire/utf8.h"

namespace {

using namespace tw::fields;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "field_list_fuzz: %s\n", what);
  std::abort();
}

std::vector<uint8_t> encode_image(const FieldImage& image) {
  std::vector<uint8_t> out(image.encoded_size());
  size_t n = image.encode(out);
  if (n != out.size()) fail("encoded_size() and encode() disagree");
  return out;
}

// The image after some earlier state, so merge is tested on a non-empty image too.
FieldImage seeded_image() {
  uint8_t buf[64];
  FieldListWriter w(buf);
  w.add_int(1, 7);
  w.add_decimal(22, Decimal{12345, -2});
  w.add_string(3, "seed");
  size_t n = w.finish();
  FieldImage image;
  if (n == 0 || !image.merge(std::span<const uint8_t>(buf, n))) fail("seed image did not build");
  return image;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> payload(data, size);
  bool valid = validate(payload);

  if ((why_invalid(payload) == Invalid::None) != valid) fail("why_invalid() and validate() disagree");
  size_t entries = 0;
  bool text_ok = true;
  bool walked = for_each(payload, [&](uint16_t, const FieldValue& v) {
    ++entries;
    if (v.type == FieldType::String) text_ok = text_ok && tw::wire::valid_utf8(v.s);
  });
  if (valid && !walked) fail("validate() accepted what for_each() rejects");
  if (valid && !text_ok) fail("validate() accepted a STRING value that is not UTF-8");

  FieldImage image = seeded_image();
  std::vector<uint8_t> before = encode_image(image);
  if (image.merge(payload) != valid) fail("merge() and validate() disagree");
  std::vector<uint8_t> after = encode_image(image);
  if (!valid) {
    if (after != before) fail("a rejected merge changed the image");
    return 0;
  }
  if (!validate(after)) fail("a merged image does not encode to a valid field list");
  if (image.fields().size() < entries) fail("merged image has fewer fields than the update");

  FieldImage copy;
  if (!copy.replace(after)) fail("replace() rejected a valid encoded image");
  if (encode_image(copy) != after) fail("replace then encode is not byte-identical");
  if (!image.merge(payload) || encode_image(image) != after) fail("merging the same update twice changed the image");
  return 0;
}
