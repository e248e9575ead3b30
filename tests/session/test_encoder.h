// A second protocol encoding, for tests only: proves the delivery policy is
// protocol-neutral by running it with an encoder that shares nothing with
// the native one. Each frame is a text header line, then raw bytes:
//   "U id seq len\n"  payload      stream update
//   "I id seq req len\n" payload   image (stream image, published image, snapshot reply)
//   "C id len\n" topic             introduction
//   "S id state code len\n" text   status / gap notice
// TestDecoder and NativeDecoder turn either stream into the same events.
#pragma once
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "session/encoder.h"
#include "tickwire/wire/codec.h"

namespace tw::session::testing {

class TestEncoder final : public Encoder {
 public:
  static constexpr uint8_t kSlot = 3;
  TestEncoder() : Encoder(kSlot) {}

  size_t stream_frame_max(const cache::Channel&, std::span<const uint8_t> payload, bool) const override {
    return 96 + payload.size();
  }
  size_t encode_stream(std::span<uint8_t> out, const cache::Channel& ch, std::span<const uint8_t> payload,
                       bool image) const override {
    return image ? put(out, line("I %u %llu 0 %zu\n", ch.id, ull(ch.seq), payload.size()), payload)
                 : put(out, line("U %u %llu %zu\n", ch.id, ull(ch.seq), payload.size()), payload);
  }
  size_t image_max(const cache::Channel& ch, bool introduce) const override {
    return 192 + (introduce ? ch.topic.size() : 0) + ch.image_size();
  }
  size_t encode_image(std::span<uint8_t> out, const cache::Channel& ch, uint32_t request_id,
                      bool introduce) const override {
    size_t n = introduce ? intro(out, ch) : 0;
    std::vector<uint8_t> image(ch.image_size());
    image.resize(ch.encode_image(image));
    return n + put(out.subspan(n), line("I %u %llu %u %zu\n", ch.id, ull(ch.seq), request_id, image.size()), image);
  }
  size_t status_max(const cache::Channel& ch, std::string_view text, bool) const override {
    return 192 + ch.topic.size() + text.size();
  }
  size_t encode_status(std::span<uint8_t> out, const cache::Channel& ch, wire::ChannelState state, wire::Code code,
                       std::string_view text, bool introduce) const override {
    size_t n = introduce ? intro(out, ch) : 0;
    auto head = line("S %u %u %u %zu\n", ch.id, unsigned(state), unsigned(code), text.size());
    return n + put(out.subspan(n), head, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  }

 private:
  static unsigned long long ull(uint64_t v) { return v; }
  template <typename... Args>
  static std::string line(const char* format, Args... args) {
    char buf[96];
    int n = std::snprintf(buf, sizeof buf, format, args...);
    return std::string(buf, static_cast<size_t>(n));
  }
  static size_t put(std::span<uint8_t> out, const std::string& head, std::span<const uint8_t> body) {
    if (out.size() < head.size() + body.size()) return 0;
    std::copy(head.begin(), head.end(), out.begin());
    std::copy(body.begin(), body.end(), out.begin() + static_cast<long>(head.size()));
    return head.size() + body.size();
  }
  static size_t intro(std::span<uint8_t> out, const cache::Channel& ch) {
    return put(out, line("C %u %zu\n", ch.id, ch.topic.size()),
               {reinterpret_cast<const uint8_t*>(ch.topic.data()), ch.topic.size()});
  }
};

// One decoded frame, whichever encoding it came in.
struct Event {
  char kind = 0;  // 'U' update, 'I' image, 'C' introduction, 'S' status
  uint32_t channel = 0;
  uint64_t seq = 0;
  uint32_t request_id = 0;
  uint16_t code = 0;
  std::vector<uint8_t> body;  // payload, topic or status text
};

// Decodes the complete frames at the front of `in` (removing them) into events.
inline void decode_test(std::vector<uint8_t>& in, std::vector<Event>& events) {
  size_t pos = 0;
  for (;;) {
    auto nl = std::find(in.begin() + static_cast<long>(pos), in.end(), uint8_t{'\n'});
    if (nl == in.end()) break;
    std::string head(in.begin() + static_cast<long>(pos), nl);
    Event e;
    e.kind = head[0];
    unsigned id = 0, state = 0, code = 0, req = 0;
    unsigned long long seq = 0;
    size_t len = 0;
    if (e.kind == 'U') std::sscanf(head.c_str(), "U %u %llu %zu", &id, &seq, &len);
    if (e.kind == 'I') std::sscanf(head.c_str(), "I %u %llu %u %zu", &id, &seq, &req, &len);
    if (e.kind == 'C') std::sscanf(head.c_str(), "C %u %zu", &id, &len);
    if (e.kind == 'S') std::sscanf(head.c_str(), "S %u %u %u %zu", &id, &state, &code, &len);
    const size_t body = static_cast<size_t>(nl - in.begin()) + 1;
    if (in.size() < body + len) break;
    e.channel = id, e.seq = seq, e.request_id = req, e.code = static_cast<uint16_t>(code);
    e.body.assign(in.begin() + static_cast<long>(body), in.begin() + static_cast<long>(body + len));
    events.push_back(std::move(e));
    pos = body + len;
  }
  in.erase(in.begin(), in.begin() + static_cast<long>(pos));
}

inline void decode_native(std::vector<uint8_t>& in, std::vector<Event>& events) {
  size_t pos = 0;
  wire::Frame f;
  while (wire::split_frame({in.data() + pos, in.size() - pos}, ~uint32_t{0}, f) == wire::SplitResult::Frame) {
    Event e;
    auto take = [](auto bytes) { return std::vector<uint8_t>(bytes.begin(), bytes.end()); };
    if (wire::Update m; f.type == wire::MsgType::Update && wire::decode(f, m)) {
      e = {'U', m.channel_id, m.seq, 0, 0, take(m.payload)};
    } else if (wire::Image m; f.type == wire::MsgType::Image && wire::decode(f, m)) {
      e = {'I', m.channel_id, m.seq, m.request_id, 0, take(m.payload)};
    } else if (wire::ChannelIntro m; f.type == wire::MsgType::Channel && wire::decode(f, m)) {
      e = {'C', m.channel_id, 0, 0, 0, take(std::span(reinterpret_cast<const uint8_t*>(m.topic.data()), m.topic.size()))};
    } else if (wire::StatusMsg m; f.type == wire::MsgType::Status && wire::decode(f, m)) {
      e = {'S', m.channel_id, 0, 0, static_cast<uint16_t>(m.code),
           take(std::span(reinterpret_cast<const uint8_t*>(m.text.data()), m.text.size()))};
    }
    if (e.kind != 0) events.push_back(std::move(e));
    pos += f.size;
  }
  in.erase(in.begin(), in.begin() + static_cast<long>(pos));
}

}  // namespace tw::session::testing
