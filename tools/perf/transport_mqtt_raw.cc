// mqtt-raw: MQTT 3.1.1 at QoS 0 spoken directly over a RawStream, so that
// an MQTT row measures the broker rather than libmosquitto (which sends each
// packet with its own send()). Packets used (OASIS MQTT 3.1.1, section 3):
//
//   -> CONNECT (clean session, keep alive 0)      <- CONNACK
//   -> SUBSCRIBE (QoS 0)                          <- SUBACK
//   -> PUBLISH QoS 0                              <- PUBLISH QoS 0
//   -> PINGREQ                                    <- PINGRESP
//
// sync() is a PINGREQ answered by a PINGRESP: a broker handles one
// connection's packets in order, so everything sent before is processed.
#include <string>
#include <string_view>
#include <vector>

#include "perf/raw_transport.h"

namespace tw::perf {

namespace {

constexpr int kConnectTimeoutMs = 5000;
constexpr uint8_t kConnect = 0x10, kConnack = 0x20, kPublish = 0x30, kSubscribe = 0x82, kSuback = 0x90,
                  kPingreq = 0xC0, kPingresp = 0xD0;
constexpr uint32_t kMaxRemainingLength = 268'435'455;  // 4-byte variable length integer

void put_u16(std::vector<uint8_t>& out, size_t v) {
  out.push_back(static_cast<uint8_t>(v >> 8));
  out.push_back(static_cast<uint8_t>(v));
}

void put_string(std::vector<uint8_t>& out, std::string_view s) {
  put_u16(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

void put_remaining_length(std::vector<uint8_t>& out, size_t n) {
  do {
    uint8_t byte = n % 128;
    n /= 128;
    out.push_back(n > 0 ? byte | 0x80 : byte);
  } while (n > 0);
}

// A packet's fixed header: its type byte, the remaining length and the
// header's own size; header_size 0 when still incomplete, -1 when invalid.
struct FixedHeader {
  uint8_t type = 0;
  size_t remaining = 0;
  int header_size = 0;
};

FixedHeader read_fixed_header(std::span<const uint8_t> in) {
  FixedHeader h;
  if (in.empty()) return h;
  h.type = in[0];
  size_t multiplier = 1;
  for (size_t i = 1; i < 5; ++i) {
    if (i >= in.size()) return h;
    h.remaining += (in[i] & 0x7F) * multiplier;
    if ((in[i] & 0x80) == 0) {
      h.header_size = static_cast<int>(i + 1);
      return h;
    }
    multiplier *= 128;
  }
  h.header_size = -1;
  return h;
}

class MqttRawTransport final : public RawTransport {
 public:
  explicit MqttRawTransport(const std::string& client_name)
      : RawTransport("mqtt-raw"), client_id_(unique_client_id(client_name)) {}

  Status connect(const std::string& host, uint16_t port) override {
    if (Status s = stream_.connect(host, port, kConnectTimeoutMs); !s) return s;
    std::vector<uint8_t> body;
    put_string(body, "MQTT");
    body.push_back(4);     // protocol level 3.1.1
    body.push_back(0x02);  // clean session
    put_u16(body, 0);      // keep alive off: a measurement sends no pings
    put_string(body, client_id_);
    append_packet(kConnect, body);
    return wait_for([this] { return connacked_; }, kConnectTimeoutMs, "CONNACK");
  }

  Status advertise(uint32_t index, std::string_view topic) override {
    names_.set(index, topic);
    return Ok{};
  }

  PublishResult publish(uint32_t index, std::span<const uint8_t> payload) override {
    const std::string* found = names_.find(index);
    if (found == nullptr) return PublishResult::Failed;
    if (PublishResult room = room_for_publish(); room != PublishResult::Sent) return room;
    const std::string& topic = *found;
    std::vector<uint8_t>& out = stream_.out();
    out.push_back(kPublish);
    put_remaining_length(out, 2 + topic.size() + payload.size());
    put_string(out, topic);
    stream_.append(payload);
    return published();
  }

  Status subscribe(std::string_view pattern) override {
    if (!stream_.connected()) return error("not connected");
    std::vector<uint8_t> body;
    put_u16(body, ++last_packet_id_);
    put_string(body, map_pattern(TransportKind::Mqtt, pattern));
    body.push_back(0);  // QoS 0
    append_packet(kSubscribe, body);
    return stream_.flush();
  }

 private:
  void append_ping() override {
    stream_.out().push_back(kPingreq);
    stream_.out().push_back(0);
  }

  void append_packet(uint8_t type, const std::vector<uint8_t>& body) {
    stream_.out().push_back(type);
    put_remaining_length(stream_.out(), body.size());
    stream_.append(body);
  }

  int parse() override {
    int handled = 0;
    for (;;) {
      std::span<const uint8_t> in = stream_.input();
      FixedHeader h = read_fixed_header(in);
      if (h.header_size < 0 || h.remaining > kMaxRemainingLength) return fail("malformed remaining length");
      if (h.header_size == 0 || in.size() < h.header_size + h.remaining) return handled;
      std::span<const uint8_t> body = in.subspan(static_cast<size_t>(h.header_size), h.remaining);
      switch (h.type & 0xF0) {
        case kPublish: {
          if ((h.type & 0x06) != 0) return fail("PUBLISH above QoS 0 (only QoS 0 was subscribed)");
          if (body.size() < 2) return fail("PUBLISH too short");
          size_t topic_size = (size_t{body[0]} << 8) | body[1];
          if (body.size() < 2 + topic_size) return fail("PUBLISH topic overruns the packet");
          if (handler_) {
            std::string_view topic(reinterpret_cast<const char*>(body.data() + 2), topic_size);
            handler_(Received{topic, body.subspan(2 + topic_size), false});
          }
          ++handled;
          break;
        }
        case kConnack:
          if (body.size() != 2 || body[1] != 0) {
            return fail("CONNECT refused (return code " + std::to_string(body.size() == 2 ? body[1] : 255) + ")");
          }
          connacked_ = true;
          break;
        case kSuback:
          if (body.size() >= 3 && body.back() == 0x80) return fail("SUBSCRIBE refused");
          break;
        case kPingresp & 0xF0:
          note_pong();
          break;
        default:
          return fail("unexpected packet type " + std::to_string(h.type >> 4));
      }
      stream_.consume(h.header_size + h.remaining);
    }
  }

  std::string client_id_;
  TopicNames names_{TransportKind::Mqtt};
  uint16_t last_packet_id_ = 0;
  bool connacked_ = false;
};

}  // namespace

std::unique_ptr<Transport> make_mqtt_raw_transport(const std::string& client_name) {
  return std::make_unique<MqttRawTransport>(client_name);
}

}  // namespace tw::perf
