// mqtt: libmosquitto, QoS 0, driven without its thread: poll() runs
// mosquitto_loop() and then drains every readable packet, so one select()
// serves many messages. libmosquitto sends each packet with its own send().
// The library is opened at run time (perf/peer_library.h).
#include <mosquitto.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <vector>

#include "base/clock.h"
#include "perf/peer_library.h"
#include "perf/transport.h"

namespace tw::perf {

namespace {

constexpr int kKeepaliveSeconds = 30;
constexpr int kConnectTimeoutMs = 5000;
constexpr int kReadBurstPackets = 4096;

// The functions of libmosquitto this transport calls.
struct Mosquitto {
  PeerLibrary library{TW_MOSQUITTO_SONAME, "libmosquitto1"};
  TW_PEER_FUNCTION(mosquitto_lib_init);
  TW_PEER_FUNCTION(mosquitto_new);
  TW_PEER_FUNCTION(mosquitto_destroy);
  TW_PEER_FUNCTION(mosquitto_connect_callback_set);
  TW_PEER_FUNCTION(mosquitto_subscribe_callback_set);
  TW_PEER_FUNCTION(mosquitto_message_callback_set);
  TW_PEER_FUNCTION(mosquitto_connect);
  TW_PEER_FUNCTION(mosquitto_connack_string);
  TW_PEER_FUNCTION(mosquitto_strerror);
  TW_PEER_FUNCTION(mosquitto_publish);
  TW_PEER_FUNCTION(mosquitto_subscribe);
  TW_PEER_FUNCTION(mosquitto_loop);
  TW_PEER_FUNCTION(mosquitto_loop_read);
  TW_PEER_FUNCTION(mosquitto_loop_write);
  TW_PEER_FUNCTION(mosquitto_want_write);
  TW_PEER_FUNCTION(mosquitto_socket);
  TW_PEER_FUNCTION(mosquitto_disconnect);
};

// Opened and initialised once, on first use; kept for the process's life.
const Mosquitto& mosquitto_library() {
  static const Mosquitto* lib = [] {
    auto* m = new Mosquitto;
    if (m->library.ok()) m->mosquitto_lib_init();
    return m;
  }();
  return *lib;
}

class MqttTransport final : public Transport {
 public:
  explicit MqttTransport(const std::string& client_name)
      : lib_(mosquitto_library()), client_id_(unique_client_id(client_name)) {
    if (!lib_.library.ok()) return;
    mosq_ = lib_.mosquitto_new(client_id_.c_str(), true, this);
    if (mosq_ == nullptr) return;
    lib_.mosquitto_connect_callback_set(mosq_, [](mosquitto*, void* self, int rc) {
      static_cast<MqttTransport*>(self)->on_connect(rc);
    });
    lib_.mosquitto_subscribe_callback_set(mosq_, [](mosquitto*, void* self, int, int, const int*) {
      ++static_cast<MqttTransport*>(self)->subacks_;
    });
    lib_.mosquitto_message_callback_set(mosq_, [](mosquitto*, void* self, const mosquitto_message* msg) {
      static_cast<MqttTransport*>(self)->on_message(msg);
    });
  }
  ~MqttTransport() override {
    close();
    if (mosq_ != nullptr) lib_.mosquitto_destroy(mosq_);
  }

  Status connect(const std::string& host, uint16_t port) override {
    if (!lib_.library.ok()) return Error{"mqtt: " + lib_.library.error()};
    if (mosq_ == nullptr) return Error{"mqtt: mosquitto_new failed"};
    int rc = lib_.mosquitto_connect(mosq_, host.c_str(), port, kKeepaliveSeconds);
    if (rc != MOSQ_ERR_SUCCESS) return Error{"mqtt: connect to " + host + ":" + std::to_string(port) + ": " + lib_.mosquitto_strerror(rc)};
    uint64_t deadline = monotonic_ns() + kConnectTimeoutMs * 1'000'000ull;
    while (connack_rc_ < 0 && monotonic_ns() < deadline) {
      if (lib_.mosquitto_loop(mosq_, 100, 1) != MOSQ_ERR_SUCCESS) break;
    }
    if (connack_rc_ != 0)
      return Error{"mqtt: broker at " + host + ":" + std::to_string(port) + " did not accept the connection" +
                   (connack_rc_ > 0 ? std::string(": ") + lib_.mosquitto_connack_string(connack_rc_) : "")};
    connected_ = true;
    return Ok{};
  }

  Status advertise(uint32_t index, std::string_view topic) override {
    names_.set(index, topic);
    return Ok{};
  }

  PublishResult publish(uint32_t index, std::span<const uint8_t> payload) override {
    const std::string* topic = names_.find(index);
    if (topic == nullptr) return PublishResult::Failed;
    int rc = lib_.mosquitto_publish(mosq_, nullptr, topic->c_str(), static_cast<int>(payload.size()),
                               payload.data(), 0, false);
    if (rc == MOSQ_ERR_SUCCESS) return PublishResult::Sent;
    if (rc == MOSQ_ERR_NOMEM) return PublishResult::BackPressure;
    connected_ = false;
    return PublishResult::Failed;
  }

  Status subscribe(std::string_view pattern) override {
    std::string mapped = map_pattern(TransportKind::Mqtt, pattern);
    int rc = lib_.mosquitto_subscribe(mosq_, nullptr, mapped.c_str(), 0);
    if (rc != MOSQ_ERR_SUCCESS) return Error{"mqtt: subscribe " + mapped + ": " + lib_.mosquitto_strerror(rc)};
    ++subscribes_sent_;
    return Ok{};
  }

  Status sync(int timeout_ms) override {
    // QoS 0 has no acknowledgement. A broker handles one connection's packets
    // in order, so the SUBACK of a throw-away subscription proves that every
    // earlier publish and subscribe was processed.
    std::string probe_topic = "tickwire-perf-sync/" + client_id_;
    if (lib_.mosquitto_subscribe(mosq_, nullptr, probe_topic.c_str(), 0) != MOSQ_ERR_SUCCESS)
      return Error{"mqtt: connection lost"};
    ++subscribes_sent_;
    uint64_t deadline = monotonic_ns() + static_cast<uint64_t>(timeout_ms) * 1'000'000ull;
    while (subacks_ < subscribes_sent_) {
      if (monotonic_ns() >= deadline) return Error{"mqtt: no SUBACK within " + std::to_string(timeout_ms) + " ms"};
      if (poll(10) < 0) return Error{"mqtt: connection lost"};
    }
    return Ok{};
  }

  int poll(int timeout_ms) override {
    if (!connected_) return -1;
    handled_ = 0;
    int rc = lib_.mosquitto_loop(mosq_, timeout_ms, 1);
    if (rc == MOSQ_ERR_SUCCESS && handled_ > 0) rc = lib_.mosquitto_loop_read(mosq_, kReadBurstPackets);
    if (rc != MOSQ_ERR_SUCCESS) {
      connected_ = false;
      return -1;
    }
    return handled_;
  }

  Status flush() override {
    if (!connected_) return Error{"mqtt: not connected"};
    if (lib_.mosquitto_want_write(mosq_) && lib_.mosquitto_loop_write(mosq_, 1) != MOSQ_ERR_SUCCESS) {
      connected_ = false;
      return Error{"mqtt: connection lost"};
    }
    return Ok{};
  }

  int wait_fd() const override { return connected_ ? lib_.mosquitto_socket(mosq_) : -1; }

  void close() override {
    if (!connected_) return;
    connected_ = false;
    lib_.mosquitto_disconnect(mosq_);
    // Let the DISCONNECT (and anything still queued) leave.
    for (int i = 0; i < 50 && lib_.mosquitto_want_write(mosq_); ++i) lib_.mosquitto_loop_write(mosq_, 1);
  }

 private:
  void on_connect(int rc) { connack_rc_ = rc; }
  void on_message(const mosquitto_message* msg) {
    ++handled_;
    if (!handler_) return;
    std::span<const uint8_t> payload(static_cast<const uint8_t*>(msg->payload), static_cast<size_t>(msg->payloadlen));
    handler_(Received{msg->topic, payload, false});
  }

  const Mosquitto& lib_;
  std::string client_id_;
  mosquitto* mosq_ = nullptr;
  int connack_rc_ = -1;
  bool connected_ = false;
  int handled_ = 0;
  uint64_t subscribes_sent_ = 0;
  uint64_t subacks_ = 0;
  TopicNames names_{TransportKind::Mqtt};
};

}  // namespace

std::unique_ptr<Transport> make_mqtt_transport(const std::string& client_name) {
  return std::make_unique<MqttTransport>(client_name);
}

}  // namespace tw::perf
