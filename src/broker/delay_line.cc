#include "broker/delay_line.h"

#include <cstring>

namespace tw::broker {

DelayLine::DelayLine(wire::PayloadKind kind, uint64_t delay_ns, uint64_t bucket_ns, DelayBudget& budget)
    : kind_(kind), delay_ns_(delay_ns), bucket_ns_(bucket_ns), budget_(budget) {}

DelayLine::~DelayLine() { clear(); }

void DelayLine::start(const cache::Channel& live, uint64_t now_ns) {
  if (!live.has_data()) return;
  Entry& e = open_entry(now_ns);
  e.image = true;
  e.seq = live.seq;
  e.messages = 1;
  if (kind_ == wire::PayloadKind::FieldList) {
    e.fields = live.image;
  } else {
    e.opaque = live.opaque;
  }
  account(e);
}

bool DelayLine::record(std::span<const uint8_t> payload, bool image, uint64_t seq, uint64_t now_ns) {
  const bool merge = !entries_.empty() && now_ns - entries_.back().opened_ns < bucket_ns_;
  Entry& e = merge ? entries_.back() : open_entry(now_ns);
  bool ok = true;
  if (kind_ == wire::PayloadKind::Opaque) {
    e.opaque.assign(payload.begin(), payload.end());  // an opaque channel keeps its last message
  } else {
    ok = image ? e.fields.replace(payload) : e.fields.merge(payload);
  }
  if (!ok) {
    if (!merge) entries_.pop_back();  // a fresh entry holds nothing yet and was not counted
    return false;
  }
  e.image = e.image || image || kind_ == wire::PayloadKind::Opaque;
  e.seq = seq;
  e.due_ns = now_ns + delay_ns_;  // the newest message decides: nothing goes out early
  ++e.messages;
  account(e);
  return true;
}

const DelayLine::Entry* DelayLine::due(uint64_t now_ns) const {
  if (entries_.empty() || entries_.front().due_ns > now_ns) return nullptr;
  return &entries_.front();
}

void DelayLine::pop() {
  if (entries_.empty()) return;
  bytes_ -= entries_.front().bytes;
  budget_.used -= entries_.front().bytes;
  entries_.pop_front();
}

void DelayLine::clear() {
  budget_.used -= bytes_;
  bytes_ = 0;
  entries_.clear();
}

bool DelayLine::compact_oldest() {
  if (entries_.size() < 2) return false;
  Entry& older = entries_[0];
  Entry& newer = entries_[1];
  if (!newer.image) {  // a field list (an opaque line's entries are all images)
    // The newer fields win, as if its messages had been recorded into the older bucket.
    scratch_.resize(newer.fields.encoded_size());
    newer.fields.encode(scratch_);
    older.fields.merge(scratch_, fields::Checked::Already);
    newer.fields = std::move(older.fields);
    newer.image = older.image;
    newer.messages += older.messages;
    account(newer);
  } else {
    newer.messages += older.messages;  // an image replaces whatever came before it
  }
  pop();
  return true;
}

size_t DelayLine::payload_size(const Entry& entry) const {
  return kind_ == wire::PayloadKind::FieldList ? entry.fields.encoded_size() : entry.opaque.size();
}

size_t DelayLine::encode(const Entry& entry, std::span<uint8_t> out) const {
  if (kind_ == wire::PayloadKind::FieldList) return entry.fields.encode(out);
  if (entry.opaque.size() > out.size()) return 0;
  if (!entry.opaque.empty()) std::memcpy(out.data(), entry.opaque.data(), entry.opaque.size());
  return entry.opaque.size();
}

size_t DelayLine::held_bytes(const fields::FieldImage& image, size_t payload_size) {
  return image.fields().capacity() * sizeof(fields::FieldImage::Field) + payload_size;
}

DelayLine::Entry& DelayLine::open_entry(uint64_t now_ns) {
  Entry& e = entries_.emplace_back();
  e.opened_ns = now_ns;
  e.due_ns = now_ns + delay_ns_;
  return e;
}

void DelayLine::account(Entry& entry) {
  const size_t now = sizeof(Entry) + held_bytes(entry.fields, payload_size(entry)) +
                     (kind_ == wire::PayloadKind::Opaque ? entry.opaque.capacity() : 0);
  bytes_ += now - entry.bytes;
  budget_.used += now - entry.bytes;
  entry.bytes = now;
}

}  // namespace tw::broker
