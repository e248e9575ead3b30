#include "tickwire/fields/payload_text.h"

#include "tickwire/fields/field_list.h"
#include "wire/utf8.h"

namespace tw::fields {

std::string hex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xF]);
  }
  return out;
}

namespace {

std::string as_text(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

void append_escape(std::string& out, const char* prefix, uint8_t code, const char* suffix) {
  static constexpr char kDigits[] = "0123456789abcdef";
  out += prefix;
  out.push_back(kDigits[code >> 4]);
  out.push_back(kDigits[code & 0xF]);
  out += suffix;
}

// The length of the well-formed UTF-8 sequence at the front of `rest`, or 0.
size_t utf8_length(std::string_view rest) {
  for (size_t n = 2; n <= 4 && n <= rest.size(); ++n) {
    if (wire::valid_utf8(rest.substr(0, n))) return n;
  }
  return 0;
}

}  // namespace

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<uint8_t>(text[i]);
    if (b < 0x80) {
      if (b < 0x20 || b == 0x7F) {
        append_escape(out, "\\x", b, "");
      } else {
        out.push_back(static_cast<char>(b));
      }
      ++i;
      continue;
    }
    const size_t n = utf8_length(text.substr(i));
    if (n == 0) {
      append_escape(out, "\\x", b, "");
      ++i;
    } else if (n == 2 && b == 0xC2 && static_cast<uint8_t>(text[i + 1]) < 0xA0) {
      append_escape(out, "\\u{", static_cast<uint8_t>(text[i + 1]), "}");  // a C1 control
      i += n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

bool is_printable(std::span<const uint8_t> bytes) {
  for (uint8_t b : bytes)
    if ((b < 0x20 && b != '\t') || b >= 0x7F) return false;
  return true;
}

std::string field_name(uint16_t id, const Dictionary& dict) {
  const FieldDef* def = dict.by_id(id);
  if (def != nullptr) return def->name;
  std::string name = "#";  // built in two steps: GCC 12 -O3 warns falsely on "#" + to_string()
  name += std::to_string(id);
  return name;
}

std::string format_payload(wire::PayloadKind kind, std::span<const uint8_t> payload,
                           const Dictionary& dict) {
  if (kind == wire::PayloadKind::Opaque)
    return is_printable(payload) ? "data=\"" + as_text(payload) + "\"" : "hex=" + hex(payload);
  std::string out;
  bool ok = for_each(payload, [&](uint16_t id, const FieldValue& v) {
    if (!out.empty()) out.push_back(' ');
    out += field_name(id, dict);
    out.push_back('=');
    out += format_value(v);
  });
  if (!ok) out += (out.empty() ? "" : " ") + std::string("<malformed field list> hex=") + hex(payload);
  return out;
}

}  // namespace tw::fields
