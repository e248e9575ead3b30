// NativeSession: a connection speaking the native protocol (docs/protocol.md)
// over any transport. The session layer (src/session) does the transport,
// the lifecycle and the delivery policy; this class is the protocol: it
// splits and decodes frames, answers HELLO and heartbeats, turns requests
// into Router calls, and encodes what only the native protocol sends
// (ACK, REQUEST, RELEASE, CHANNEL_INFO, ERROR). One file per packet family:
//   native_session.cc  framing, HELLO/WELCOME, HEARTBEAT, ACK, ERROR
//   subscribe.cc       SUBSCRIBE, UNSUBSCRIBE, SNAPSHOT
//   publish.cc         REGISTER, PUBLISH
//   provider.cc        PROVIDE, WITHDRAW, STREAM_STATUS, REQUEST, RELEASE
//   admin.cc           LIST_CHANNELS, CHANNEL_INFO
//   guaranteed.cc      GUARANTEED_PUBLISH, BIND, UNBIND, CONSUMER_ACK, NACK (version 4)
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "queue/mailbox.h"
#include "session/session.h"
#include "topic/topic.h"
#include "tickwire/wire/codec.h"
#include "tickwire/wire/guaranteed.h"

namespace tw::native {

class NativeSession final : public session::Session,
                            public broker::ProviderOutlet,
                            public broker::RequesterOutlet,
                            private queue::PortHandler {
 public:
  NativeSession(Env env, std::unique_ptr<session::Transport> transport, std::string peer, uint64_t now_ns);
  ~NativeSession() override;

  // The native protocol provides services and lists channels (PROVIDE, LIST_CHANNELS).
  broker::ProviderOutlet* as_provider() override { return this; }
  broker::RequesterOutlet* as_requester() override { return this; }
  void send_request(uint32_t stream_id, std::string_view topic) override;
  void send_release(uint32_t stream_id) override;
  void send_channel_info(const wire::ChannelInfo& info) override;
  void complete_request(uint32_t request_id, const broker::Outcome& outcome) override;
  void listing_page(uint32_t request_id, cache::ChannelId next, bool shard_done) override;

 protected:
  size_t parse(std::span<const uint8_t> in) override;
  size_t encode_goodbye(std::span<uint8_t> out, wire::Code code, std::string_view text) override;
  void on_open_tick(uint64_t now_ns) override;
  uint64_t open_tick_due_ns() const override;
  void pace() override { continue_listing(); }
  bool can_pace() const override { return !listing_ || !listing_->waiting; }
  void on_login(std::shared_ptr<const auth::Grants> grants, std::string_view error) override;
  void on_reentitled() override;
  // After a reload: services this connection may no longer provide are withdrawn.
  void withdraw_revoked_services();

 private:
  void handle(const wire::Frame& frame);
  void handle_hello(const wire::Frame& frame);
  // Opens the session and answers WELCOME (with the version and heartbeat HELLO settled).
  void welcome();
  void remember_topic(uint32_t publish_id, std::string_view topic);
  void handle_subscribe(const wire::Frame& frame, bool subscribe);
  void handle_snapshot(const wire::Frame& frame);
  void handle_register(const wire::Frame& frame);
  void handle_publish(const wire::Frame& frame);
  void handle_provide(const wire::Frame& frame, bool provide);
  void handle_stream_status(const wire::Frame& frame);
  void publisher_status(const wire::StreamStatus& msg);
  void handle_list_channels(const wire::Frame& frame);
  // Sends the listing's next rows while the output has room (a bounded
  // number of channels per turn); paced until the last row and the ACK.
  void continue_listing();
  void handle_reload(const wire::Frame& frame);
  // Guaranteed messaging (guaranteed.cc): the store thread (queue::Spool) answers through port_.
  void handle_guaranteed(const wire::Frame& frame);
  void handle_guaranteed_publish(const wire::Frame& frame);
  void handle_bind(const wire::Frame& frame);
  void handle_consumer_ack(const wire::Frame& frame);
  void refuse_publish(uint64_t message_id, wire::Code code, std::string_view text);
  const std::shared_ptr<queue::Port>& port();
  void on_store_frames(std::span<const uint8_t> frames, uint32_t answered) override;
  void answer_reload();  // on the tick, once the verifier thread has reloaded
  // Bad input: counted, and the connection closes with `code`.
  void reject(wire::Code code, std::string_view text);
  // A provider message the router ignored: counted, and logged once per connection.
  void note_stray(const broker::Outcome& outcome);
  void send_ack(uint32_t request_id, const broker::Outcome& outcome);
  // Encodes a control frame (at most max_size bytes) into the arena and queues it.
  template <typename Message>
  void queue_control(const Message& message, size_t max_size = kControlFrameMax) {
    output().queue(max_size, [&](std::span<uint8_t> out) { return wire::encode(out, message); });
  }
  // Entitlements are asked only of topics and patterns valid under these.
  topic::Limits topic_limits() const {
    return {env().config.limits.max_topic_length, env().config.limits.max_topic_depth};
  }
  static constexpr size_t kControlFrameMax = wire::kHeaderSize + 16 + 2 + 0xFFFF;  // largest str16 frame

  uint32_t heartbeat_ms_ = 0;
  bool stray_logged_ = false;
  std::vector<cache::ChannelId> publish_ids_;  // publish_id -> channel
  std::optional<broker::ListingCursor> listing_;  // a LIST_CHANNELS in progress
  // With authentication: publish_id -> topic, to re-check after a reload.
  std::vector<std::string> publish_topics_;
  // With authentication: service -> pattern this connection provides, to re-check after a reload.
  std::map<std::string, std::string, std::less<>> provided_;
  // A publish id whose entitlement was revoked; no channel has this id.
  static constexpr cache::ChannelId kWithdrawn = ~cache::ChannelId{0};
  uint16_t version_ = wire::kProtocolVersion;
  std::string hello_name_;  // the client's name while its login is checked
  std::shared_ptr<auth::Login> reload_;  // an admin's RELOAD in progress
  uint32_t reload_request_id_ = 0;
  std::shared_ptr<queue::Port> port_;  // from the first guaranteed frame on
  uint32_t unanswered_ = 0;            // guaranteed publishes the store has not answered
  bool window_full_ = false;           // input paused until the store answers one (store.publish_window)
};

}  // namespace tw::native
