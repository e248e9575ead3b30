// A real tw::tier::Broker on its own thread, on 127.0.0.1 (port 0 = any),
// plus helpers to drive clients until something happens. Loops are bounded
// by iteration counts so a broken broker fails the test instead of hanging it;
// no test asserts on elapsed time.
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tier/broker.h"
#include "tickwire/client/client.h"
#include "tickwire/fields/field_list.h"

namespace tw::client::testing {

class TestBroker {
 public:
  explicit TestBroker(uint16_t port = 0) : TestBroker(config::BrokerConfig{}, port) {}
  // `config` as given, except listen (127.0.0.1:port) and log_level (Warn).
  TestBroker(config::BrokerConfig config, uint16_t port) {
    config.listen = "127.0.0.1:" + std::to_string(port);
    config.log_level = log::Level::Warn;
    log::set_level(config.log_level);  // the level is process-wide; tickwired's main sets it likewise
    broker_ = std::make_unique<tier::Broker>(config);
    Status listening = broker_->listen();
    if (!listening) {
      ADD_FAILURE() << listening.error().message;
      return;
    }
    port_ = broker_->port();
    thread_ = std::thread([b = broker_.get()] { b->run(); });
  }
  ~TestBroker() { stop(); }
  void stop() {
    if (!thread_.joinable()) return;
    broker_->stop();
    thread_.join();
    final_totals_ = broker_->totals();
    broker_.reset();
  }
  uint16_t port() const { return port_; }
  // The running broker (the admin API's tests ask it for its loops); valid until stop().
  tier::Broker& broker() { return *broker_; }
  // The broker's totals as it stopped (Broker::totals after run returned).
  const tier::LoopSnapshot& final_totals() const { return final_totals_; }

 private:
  std::unique_ptr<tier::Broker> broker_;
  std::thread thread_;
  uint16_t port_ = 0;
  tier::LoopSnapshot final_totals_;
};

inline Options options_for(uint16_t port, const char* name) {
  Options o;
  o.port = port;
  o.client_name = name;
  o.reconnect_min_ms = 10;
  o.reconnect_max_ms = 100;
  return o;
}

// Polls until done() or about 10 s of polls; returns done().
inline bool poll_until(Client& client, const std::function<bool()>& done, int max_polls = 200) {
  for (int i = 0; i < max_polls && !done(); ++i) client.poll(50);
  return done();
}

inline std::vector<uint8_t> decimal_field(uint16_t id, int64_t mantissa, int8_t exponent) {
  std::vector<uint8_t> buf(64);
  fields::FieldListWriter w(buf);
  w.add_decimal(id, {mantissa, exponent});
  buf.resize(w.finish());
  return buf;
}

// A copy of a delivered message, since Message views die with the callback.
struct Received {
  MessageKind kind;
  std::string topic;
  uint32_t channel_id;
  uint64_t seq;
  bool gap;
  std::vector<uint8_t> payload;
  uint32_t subscription_id;
  wire::ChannelState state;  // Status only
  wire::Code code;           // Status only
};

inline MessageHandler recorder(std::vector<Received>& out) {
  return [&out](const Message& m) {
    out.push_back({m.kind, std::string(m.topic), m.channel_id, m.seq, m.gap,
                   std::vector<uint8_t>(m.payload.begin(), m.payload.end()), m.subscription_id, m.state, m.code});
  };
}

// The broker answers a snapshot after every earlier frame of the same
// connection: a publisher's snapshot proves its publishes were processed.
inline void confirm_published(Client& publisher, std::string_view topic) {
  auto r = publisher.snapshot(topic, 10'000);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->found);
}

}  // namespace tw::client::testing
