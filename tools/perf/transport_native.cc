// native: tw::client::Client, opaque channels.
//
// IMAGEs come in two cases (docs/protocol.md, "Subscribing"): the cached image
// of a channel that existed when the SUBSCRIBE was handled (old data: only a
// baseline), and the first message of a channel created later (new data).
// The broker sends the first kind before it answers any later request of the
// connection, so images that arrive before sync() returned are flagged as
// initial images and those after it are counted as messages.
#include <vector>

#include "tickwire/client/client.h"
#include "perf/transport.h"

namespace tw::perf {

namespace {

class NativeTransport final : public Transport {
 public:
  NativeTransport(std::string client_name, TlsOptions tls, PayloadFormat format)
      : client_name_(std::move(client_name)), tls_(std::move(tls)), format_(format) {}

  Status connect(const std::string& host, uint16_t port) override {
    client::Options options;
    options.host = host;
    options.port = port;
    options.client_name = client_name_;
    options.tls = tls_.on;
    options.ca = tls_.ca;
    options.cert = tls_.cert;
    options.key = tls_.key;
    options.user = tls_.user;
    options.password = tls_.password;
    // A measurement must not silently continue on a new connection.
    options.reconnect = false;
    return client_.connect(options);
  }

  Status advertise(uint32_t index, std::string_view topic) override {
    auto id = client_.advertise(
        topic, format_ == PayloadFormat::FieldList ? wire::PayloadKind::FieldList : wire::PayloadKind::Opaque);
    if (!id) return id.error();
    if (ids_.size() <= index) ids_.resize(index + 1, 0);
    ids_[index] = *id;
    if (first_topic_.empty()) first_topic_ = topic;
    return Ok{};
  }

  PublishResult publish(uint32_t index, std::span<const uint8_t> payload) override {
    if (index >= ids_.size() || ids_[index] == 0) return PublishResult::Failed;
    if (!client_.publish(ids_[index], payload)) {
      return client_.connected() ? PublishResult::BackPressure : PublishResult::Failed;
    }
    if (client_.pending_output() >= kFlushBytes && !client_.flush()) return PublishResult::Failed;
    return PublishResult::Sent;
  }

  Status subscribe(std::string_view pattern) override {
    auto id = client_.subscribe(pattern, [this](const client::Message& msg) {
      if (msg.kind == client::MessageKind::Status || !handler_) return;
      bool initial = msg.kind == client::MessageKind::Image && !synced_since_subscribe_;
      handler_(Received{msg.topic, msg.payload, initial, msg.kind == client::MessageKind::Image});
    });
    if (!id) return id.error();
    synced_since_subscribe_ = false;
    return Ok{};
  }

  Status sync(int timeout_ms) override {
    // The broker answers a SNAPSHOT after every earlier frame of the
    // connection: once it answered, subscriptions and publishes are in.
    std::string_view topic = first_topic_.empty() ? std::string_view("PERF_SYNC") : first_topic_;
    auto answer = client_.snapshot(topic, timeout_ms);
    if (!answer) return answer.error();
    synced_since_subscribe_ = true;
    return Ok{};
  }

  int poll(int timeout_ms) override {
    int handled = client_.poll(timeout_ms);
    if (handled < 0 || !client_.connected()) return -1;
    return handled;
  }

  Status flush() override { return client_.flush(); }
  int wait_fd() const override { return client_.socket_fd(); }
  bool has_buffered_input() const override { return client_.buffered_input() > 0; }
  void close() override { client_.close(); }

 private:
  std::string client_name_;
  client::Client client_;
  std::vector<client::PublisherId> ids_;  // local topic index -> publish id
  std::string first_topic_;
  bool synced_since_subscribe_ = true;
  TlsOptions tls_;
  PayloadFormat format_;
};

}  // namespace

std::unique_ptr<Transport> make_native_transport(const std::string& client_name, const TlsOptions& tls,
                                                 PayloadFormat format) {
  return std::make_unique<NativeTransport>(client_name, tls, format);
}

}  // namespace tw::perf
