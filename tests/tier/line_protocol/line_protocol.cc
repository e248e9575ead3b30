#include "tier/line_protocol/line_protocol.h"

#include <charconv>
#include <cstring>
#include <string>

namespace tw::testing {
namespace {

std::string_view text_of(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

size_t put(std::span<uint8_t> out, std::string_view line) {
  if (line.size() > out.size()) return 0;
  std::memcpy(out.data(), line.data(), line.size());
  return line.size();
}

std::string message_line(const char* kind, const cache::Channel& ch, std::span<const uint8_t> payload) {
  return std::string(kind) + " " + ch.topic + " " + std::to_string(ch.seq) + " " + std::string(text_of(payload)) +
         "\n";
}

class LineEncoder final : public session::Encoder {
 public:
  explicit LineEncoder(uint8_t slot) : Encoder(slot) {}
  size_t stream_frame_max(const cache::Channel& ch, std::span<const uint8_t> payload, bool) const override {
    return ch.topic.size() + payload.size() + 40;
  }
  size_t encode_stream(std::span<uint8_t> out, const cache::Channel& ch, std::span<const uint8_t> payload,
                       bool) const override {
    return put(out, message_line("UPDATE", ch, payload));
  }
  size_t image_max(const cache::Channel& ch, bool) const override { return ch.topic.size() + ch.opaque.size() + 40; }
  size_t encode_image(std::span<uint8_t> out, const cache::Channel& ch, uint32_t, bool) const override {
    return put(out, message_line("IMAGE", ch, ch.opaque));
  }
  size_t status_max(const cache::Channel& ch, std::string_view, bool) const override { return ch.topic.size() + 40; }
  size_t encode_status(std::span<uint8_t> out, const cache::Channel& ch, wire::ChannelState state, wire::Code,
                       std::string_view, bool) const override {
    return put(out, "STATUS " + ch.topic + " " + wire::state_name(state) + "\n");
  }
};

class LineSession final : public session::Session {
 public:
  LineSession(Env env, const LineEncoder& encoder, std::unique_ptr<session::Transport> transport, std::string peer,
              uint64_t now_ns)
      : Session(env, std::move(transport), std::move(peer), encoder, now_ns) {
    open("line", 60'000'000'000ull);
  }
  // It neither provides channels nor lists them.

 protected:
  size_t parse(std::span<const uint8_t> in) override {
    const std::string_view text = text_of(in);
    size_t pos = 0;
    for (size_t end; !closing() && (end = text.find('\n', pos)) != std::string_view::npos; pos = end + 1) {
      ++env().counters.frames_in;
      handle(text.substr(pos, end - pos));
    }
    return pos;
  }
  size_t encode_goodbye(std::span<uint8_t> out, wire::Code, std::string_view text) override {
    return put(out, "BYE " + std::string(text.substr(0, 100)) + "\n");
  }
  void on_open_tick(uint64_t) override {}
  void on_login(std::shared_ptr<const auth::Grants>, std::string_view) override {}

 private:
  void handle(std::string_view line) {
    if (line.starts_with("SUB ")) return subscribe(line.substr(4));
    if (line.starts_with("PUB ")) {
      const size_t space = line.find(' ', 4);
      if (space != std::string_view::npos) return publish(line.substr(4, space - 4), line.substr(space + 1));
    }
    fail(wire::Code::MalformedFrame, "expected SUB or PUB");
  }
  void subscribe(std::string_view pattern) {
    const broker::Outcome check = env().router.check_subscribe(this, pattern);
    reply(check.ok() ? "OK " + std::string(pattern) + "\n"
                     : "ERR " + std::to_string(static_cast<int>(check.code)) + " " + check.detail + "\n");
    if (!check.ok()) return;
    env().router.subscribe(this, pattern);
    settle({&pattern, 1});
  }
  void publish(std::string_view topic, std::string_view text) {
    cache::ChannelId id = 0;
    broker::Outcome outcome = advertise(topic, wire::PayloadKind::Opaque, id);
    if (outcome.ok()) {
      outcome = env().router.publish(id, {reinterpret_cast<const uint8_t*>(text.data()), text.size()}, true);
    }
    if (!outcome.ok()) reply("ERR " + std::to_string(static_cast<int>(outcome.code)) + " " + outcome.detail + "\n");
  }
  void reply(const std::string& line) {
    output().queue(line.size(), [&](std::span<uint8_t> out) { return put(out, line); });
  }
};

}  // namespace

tier::Protocol line_protocol(uint8_t slot) {
  tier::Protocol p;
  p.name = "line";
  p.encoder_slots = {slot};
  p.open = [encoder = std::make_shared<LineEncoder>(slot)](session::Session::Env env,
                                                          std::unique_ptr<session::Transport> transport,
                                                          std::string peer, const std::string&,
                                                          uint64_t now_ns) -> std::unique_ptr<session::Session> {
    return std::make_unique<LineSession>(env, *encoder, std::move(transport), std::move(peer), now_ns);
  };
  p.refusal = {'B', 'U', 'S', 'Y', '\n'};
  return p;
}

}  // namespace tw::testing
