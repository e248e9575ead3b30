// The field dictionary and the text forms of field values.
#include "tickwire/fields/dictionary.h"

#include <fstream>
#include <memory>
#include <sstream>
#include <utility>

#include "tickwire/fields/builtin_fields.h"

namespace tw::fields {
namespace {

bool is_name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

bool is_valid_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!is_name_char(c)) return false;
  }
  return true;
}

bool parse_field_id(std::string_view text, uint16_t& out) {
  if (text.empty() || text.size() > 5) return false;
  uint32_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  if (v > UINT16_MAX) return false;
  out = static_cast<uint16_t>(v);
  return true;
}

// Splits a line into at most `max` whitespace-separated words; returns the count found
// (max + 1 if there were more).
size_t split_words(std::string_view line, std::string_view* words, size_t max) {
  size_t n = 0;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    if (i == line.size()) break;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (n == max) return max + 1;
    words[n++] = line.substr(start, i - start);
  }
  return n;
}

Error line_error(const std::string& source, size_t line, const std::string& message) {
  return Error{source + ":" + std::to_string(line) + ": " + message};
}

// Parses one non-blank, comment-stripped line into a definition.
Result<FieldDef> parse_line(std::string_view line, const std::string& source, size_t line_no) {
  std::string_view words[3];
  if (split_words(line, words, 3) != 3) return line_error(source, line_no, "expected NAME ID TYPE");
  FieldDef def;
  if (!is_valid_name(words[0])) {
    return line_error(source, line_no, "bad field name '" + std::string(words[0]) + "' (letters, digits, _)");
  }
  def.name = std::string(words[0]);
  if (!parse_field_id(words[1], def.id)) {
    return line_error(source, line_no, "bad field id '" + std::string(words[1]) + "' (0..65535)");
  }
  if (!parse_type(words[2], def.type)) {
    return line_error(source, line_no,
                      "unknown type '" + std::string(words[2]) + "' (int, decimal, string, bytes, time)");
  }
  return def;
}

}  // namespace

const Dictionary& Dictionary::builtin() {
  static const Dictionary dict = [] {
    Dictionary d;
    for (const auto& f : kBuiltinFields) {
      Status s = d.add(FieldDef{std::string(f.name), f.id, f.type});
      (void)s;  // the table is checked for duplicates by the tests
    }
    return d;
  }();
  return dict;
}

Result<Dictionary> Dictionary::parse(std::string_view text, const std::string& source_name,
                                     const Dictionary* base) {
  Dictionary dict = base ? *base : Dictionary{};
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    line = line.substr(0, line.find('#'));
    std::string_view unused[1];
    if (split_words(line, unused, 0) == 0) continue;  // blank or comment only
    auto def = parse_line(line, source_name, line_no);
    if (!def) return def.error();
    Status added = dict.add(std::move(*def));
    if (!added) return line_error(source_name, line_no, added.error().message);
  }
  return dict;
}

Result<Dictionary> Dictionary::load(const std::string& path, const Dictionary* base) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open"};
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Error{path + ": read error"};
  return parse(text.str(), path, base);
}

namespace {
std::unique_ptr<const Dictionary>& broker_dictionary_slot() {
  static std::unique_ptr<const Dictionary> slot;
  return slot;
}
}  // namespace

const Dictionary& broker_dictionary() {
  const auto& set = broker_dictionary_slot();
  return set ? *set : Dictionary::builtin();
}

void set_broker_dictionary(Dictionary dict) {
  broker_dictionary_slot() = std::make_unique<const Dictionary>(std::move(dict));
}

const FieldDef* Dictionary::by_name(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : &defs_[it->second];
}

const FieldDef* Dictionary::by_id(uint16_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &defs_[it->second];
}

Status Dictionary::add(FieldDef def) {
  if (by_name_.count(def.name)) return Error{"duplicate field name '" + def.name + "'"};
  if (by_id_.count(def.id)) {
    return Error{"duplicate field id " + std::to_string(def.id) + " ('" + def.name + "' and '" +
                 defs_[by_id_[def.id]].name + "')"};
  }
  by_name_.emplace(def.name, defs_.size());
  by_id_.emplace(def.id, defs_.size());
  defs_.push_back(std::move(def));
  return Ok{};
}

}  // namespace tw::fields
