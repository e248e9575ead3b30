// The messaging systems perf can drive, behind one small interface.
//
//   native  tw::client::Client (libtickwire), opaque channels, topic PREFIX/i
//   mqtt    libmosquitto, QoS 0, topic PREFIX/i, pattern '*'->'+', '>'->'#'
//   nats    libnats, subject PREFIX.i ('/'->'.'); '*' and '>' keep their meaning
//   mqtt-raw, nats-raw  the same protocols spoken directly (raw_stream.h): what
//           the broker can do, where mqtt and nats show what a user's client
//           library gets
//
// Patterns and topics are always given in native syntax; each transport maps them.
//
// Threading: a Transport is owned by one thread; the handler runs on it,
// inside poll() (the NATS transport pulls messages from a synchronous
// subscription there, so libnats' own threads never call back).
//
// Batching: publish() buffers where the library allows; poll() and flush()
// write the buffer out, and a transport also writes when its buffer passes
// kFlushBytes. (libmosquitto sends each packet with its own send() and libnats
// batches in its own flusher thread: neither can be changed from outside.)
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tickwire/base/result.h"

namespace tw::perf {

enum class TransportKind : uint8_t { Native, Mqtt, Nats, MqttRaw, NatsRaw };
// "native" | "mqtt" | "nats" | "mqtt-raw" | "nats-raw"
Result<TransportKind> parse_transport(std::string_view name);
std::vector<std::string> transport_names();  // every name parse_transport takes
const char* transport_name(TransportKind kind);
uint16_t default_port(TransportKind kind);  // 9400, 1883 (MQTT), 4222 (NATS)
// The protocol family: mqtt-raw speaks MQTT as mqtt does, nats-raw NATS.
TransportKind protocol_of(TransportKind kind);

struct ServerAddress {
  std::string host;
  uint16_t port = 0;
};
// The server to use: `flag` (--server) if not empty, else $TICKWIRE_SERVER,
// else 127.0.0.1 on the transport's default port.
Result<ServerAddress> resolve_server(TransportKind kind, std::string_view flag);

// Native topic/pattern -> the transport's syntax.
std::string map_topic(TransportKind kind, std::string_view topic);
std::string map_pattern(TransportKind kind, std::string_view pattern);

// Local topic index -> the topic in a transport's syntax: advertise() names
// an index once, publish() looks it up.
class TopicNames {
 public:
  explicit TopicNames(TransportKind kind) : kind_(kind) {}
  void set(uint32_t index, std::string_view topic) {
    if (names_.size() <= index) names_.resize(index + 1);
    names_[index] = map_topic(kind_, topic);
  }
  // Null when the index was never advertised.
  const std::string* find(uint32_t index) const {
    return index < names_.size() && !names_[index].empty() ? &names_[index] : nullptr;
  }

 private:
  TransportKind kind_;
  std::vector<std::string> names_;
};

// MQTT client ids must be unique per broker (a duplicate id disconnects the
// older client): the name plus the process id and a per-process counter.
std::string unique_client_id(const std::string& name);

inline constexpr size_t kFlushBytes = 64u << 10;

struct Received {
  std::string_view topic;            // in the transport's syntax
  std::span<const uint8_t> payload;  // valid during the handler only
  bool is_initial_image = false;     // native IMAGE: the cached last value, not a new message
  bool is_image = false;             // native IMAGE, whenever it came
};
using ReceiveHandler = std::function<void(const Received&)>;

// publish() outcome: back pressure is a value, not an error.
enum class PublishResult : uint8_t { Sent, BackPressure, Failed };

class Transport {
 public:
  virtual ~Transport() = default;

  // Connects and waits for the server's acceptance (at most ~5 s).
  virtual Status connect(const std::string& host, uint16_t port) = 0;
  // Declares local topic `index` (dense, from 0) as native topic `topic`.
  virtual Status advertise(uint32_t index, std::string_view topic) = 0;
  virtual PublishResult publish(uint32_t index, std::span<const uint8_t> payload) = 0;
  // Subscribes to a native pattern; messages go to the handler set before.
  virtual Status subscribe(std::string_view pattern) = 0;
  // Blocks until the server has certainly processed everything sent so far
  // (subscriptions active, publishes routed), at most timeout_ms.
  virtual Status sync(int timeout_ms) = 0;
  // Flushes, waits up to timeout_ms for input, calls the handler; returns the
  // number of messages handled, -1 when the connection is gone.
  virtual int poll(int timeout_ms) = 0;
  // Writes buffered output without waiting; an error when the connection is gone.
  virtual Status flush() = 0;
  // A descriptor that polls readable when poll(0) has input to handle, so one
  // thread can wait on several transports (perf sub --connections); -1 when
  // not connected.
  virtual int wait_fd() const = 0;
  // Input received but not yet handled that wait_fd does not show (TLS
  // records already decrypted): poll(0) now instead of waiting on the fd.
  virtual bool has_buffered_input() const { return false; }
  virtual void close() = 0;

  void set_handler(ReceiveHandler handler) { handler_ = std::move(handler); }

 protected:
  ReceiveHandler handler_;
};

// TLS for the native transport (tickwire --tls/--ca/--cert/--key; docs/security.md).
struct TlsOptions {
  bool on = false;
  std::string ca, cert, key;
  // The native transport's login too, on a broker with users (docs/security.md); "" = none.
  std::string user, password;
};
// Native channels carry opaque payloads, or field lists (perf --fields).
enum class PayloadFormat : uint8_t { Opaque, FieldList };
// TLS and field lists are the native transport's only: an error for the others.
Result<std::unique_ptr<Transport>> make_transport(TransportKind kind, const std::string& client_name,
                                                  const TlsOptions& tls = {},
                                                  PayloadFormat format = PayloadFormat::Opaque);

// Each transport's factory (one file each).
std::unique_ptr<Transport> make_native_transport(const std::string& client_name, const TlsOptions& tls,
                                                 PayloadFormat format);
std::unique_ptr<Transport> make_mqtt_transport(const std::string& client_name);
std::unique_ptr<Transport> make_nats_transport(const std::string& client_name);
std::unique_ptr<Transport> make_mqtt_raw_transport(const std::string& client_name);
std::unique_ptr<Transport> make_nats_raw_transport(const std::string& client_name);

}  // namespace tw::perf
