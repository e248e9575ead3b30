// nats-raw: the NATS text protocol spoken directly over a RawStream, so that
// the load generator costs about what the native one does and a NATS row
// measures nats-server rather than libnats (issue: libnats' threads took
// 10 to 13 cores while nats-server stayed under one).
//
//   -> CONNECT {...}\r\n  PING\r\n          <- INFO {...}\r\n  PONG\r\n
//   -> SUB <subject> <sid>\r\n
//   -> PUB <subject> <bytes>\r\n<payload>\r\n
//   <- MSG <subject> <sid> [reply] <bytes>\r\n<payload>\r\n
//   <- PING\r\n -> PONG\r\n ;  <- -ERR '<text>'\r\n closes the measurement
//
// sync() is a PING answered by a PONG: the server handles a connection's
// protocol lines in order, so everything sent before is processed.
#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include "perf/raw_transport.h"

namespace tw::perf {

namespace {

constexpr int kConnectTimeoutMs = 5000;

std::string_view as_text(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// The n-th space-separated word of a protocol line (no allocation).
std::string_view word(std::string_view line, size_t n) {
  size_t start = 0;
  for (;;) {
    while (start < line.size() && line[start] == ' ') ++start;
    size_t end = line.find(' ', start);
    if (end == std::string_view::npos) end = line.size();
    if (n == 0 || start >= line.size()) return line.substr(start, end - start);
    start = end;
    --n;
  }
}

size_t count_words(std::string_view line) {
  size_t n = 0;
  while (!word(line, n).empty()) ++n;
  return n;
}

class NatsRawTransport final : public RawTransport {
 public:
  explicit NatsRawTransport(std::string client_name) : RawTransport("nats-raw"), client_name_(std::move(client_name)) {}

  Status connect(const std::string& host, uint16_t port) override {
    if (Status s = stream_.connect(host, port, kConnectTimeoutMs); !s) return s;
    // verbose off: no +OK per line; echo on, as libnats' default.
    stream_.append("CONNECT {\"verbose\":false,\"pedantic\":false,\"lang\":\"tickwire-perf\",\"version\":\"" TW_VERSION
                   "\",\"protocol\":1,\"echo\":true,\"headers\":false,\"name\":\"");
    stream_.append(client_name_);
    stream_.append("\"}\r\n");
    return sync(kConnectTimeoutMs);
  }

  Status advertise(uint32_t index, std::string_view topic) override {
    names_.set(index, topic);
    return Ok{};
  }

  PublishResult publish(uint32_t index, std::span<const uint8_t> payload) override {
    const std::string* subject = names_.find(index);
    if (subject == nullptr) return PublishResult::Failed;
    if (PublishResult room = room_for_publish(); room != PublishResult::Sent) return room;
    char size[24];
    auto [end, ec] = std::to_chars(size, size + sizeof size, payload.size());
    stream_.append("PUB ");
    stream_.append(*subject);
    stream_.append(" ");
    stream_.append(std::string_view(size, static_cast<size_t>(end - size)));
    stream_.append("\r\n");
    stream_.append(payload);
    stream_.append("\r\n");
    return published();
  }

  Status subscribe(std::string_view pattern) override {
    if (!stream_.connected()) return error("not connected");
    stream_.append("SUB ");
    stream_.append(map_pattern(TransportKind::Nats, pattern));
    stream_.append(" " + std::to_string(++last_sid_) + "\r\n");
    return stream_.flush();
  }

 private:
  void append_ping() override { stream_.append("PING\r\n"); }

  int parse() override {
    int handled = 0;
    for (;;) {
      std::string_view input = as_text(stream_.input());
      size_t eol = input.find("\r\n");
      if (eol == std::string_view::npos) return handled;
      std::string_view line = input.substr(0, eol);
      std::string_view op = word(line, 0);
      size_t used = eol + 2;
      if (op == "MSG") {
        // MSG <subject> <sid> [reply-to] <#bytes>
        size_t words = count_words(line);
        if (words != 4 && words != 5) return fail("malformed MSG line");
        std::string_view size_text = word(line, words - 1);
        size_t size = 0;
        auto [p, ec] = std::from_chars(size_text.data(), size_text.data() + size_text.size(), size);
        if (ec != std::errc{}) return fail("malformed MSG size");
        if (input.size() < used + size + 2) return handled;  // payload still arriving
        if (handler_) {
          auto payload = stream_.input().subspan(used, size);
          handler_(Received{word(line, 1), payload, false});
        }
        used += size + 2;
        ++handled;
      } else if (op == "PING") {
        stream_.append("PONG\r\n");
      } else if (op == "PONG") {
        note_pong();
      } else if (op == "-ERR") {
        return fail(std::string(line));
      }  // INFO and +OK need nothing
      stream_.consume(used);
    }
  }

  std::string client_name_;
  TopicNames names_{TransportKind::Nats};
  uint64_t last_sid_ = 0;
};

}  // namespace

std::unique_ptr<Transport> make_nats_raw_transport(const std::string& client_name) {
  return std::make_unique<NatsRawTransport>(client_name);
}

}  // namespace tw::perf
