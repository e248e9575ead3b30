// What a Client hands to user callbacks. Views point into the client's input
// buffer and are valid only during the callback: copy what you keep.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "tickwire/wire/guaranteed.h"
#include "tickwire/wire/protocol.h"

namespace tw::client {

enum class MessageKind : uint8_t { Image, Update, Status };
const char* kind_name(MessageKind kind);  // "IMAGE", "UPDATE", "STATUS"

struct Message {
  MessageKind kind = MessageKind::Update;
  std::string_view topic;                 // empty only if the broker never introduced the channel
  uint32_t channel_id = 0;
  uint64_t seq = 0;                       // 0 for Status
  wire::PayloadKind payload_kind = wire::PayloadKind::FieldList;
  std::span<const uint8_t> payload;       // Image/Update: a field list or opaque bytes
  // Status only:
  wire::ChannelState state = wire::ChannelState::Ok;
  wire::Code code = wire::Code::Ok;
  std::string_view text;
  // Update only: seq was not last+1 for this channel. expected_seq is what was due.
  bool gap = false;
  uint64_t expected_seq = 0;
  // The gap was announced by the broker (STATUS MESSAGES_DROPPED under the
  // drop policy): a known loss of `announced_dropped` messages, not an accident.
  bool gap_announced = false;
  uint64_t announced_dropped = 0;
  uint32_t subscription_id = 0;           // the subscription whose handler is called
};

using MessageHandler = std::function<void(const Message&)>;

enum class ConnectionEvent : uint8_t { Connected, Disconnected, Reconnected };
const char* event_name(ConnectionEvent event);
// reason: empty for Connected/Reconnected; why the connection was lost otherwise.
using ConnectionHandler = std::function<void(ConnectionEvent, std::string_view reason)>;

// An ERROR frame from the broker (request_id 0, closes the connection), or a
// request the broker refused with a non-OK ACK (request_id set; for a refused
// SUBSCRIBE the subscription has been removed).
struct ErrorInfo {
  wire::Code code = wire::Code::Ok;
  std::string_view text;
  uint32_t request_id = 0;
  std::string_view subject;  // the pattern or topic of the refused request, if any
};
using ErrorHandler = std::function<void(const ErrorInfo&)>;

// Interactive providers (Client::provide). A stream is one topic the broker
// asked this client to serve; `id` is the broker's stream id (it has
// wire::kStreamIdBit set) and is what publish_stream()/stream_status() take.
// `topic` is valid only during the callback.
struct Stream {
  uint32_t id = 0;
  std::string_view topic;
};
// REQUEST: answer with publish_stream(id, image, true) then updates, or with
// stream_status(id, Closed, NotFound, ...). May answer later, from the loop.
using RequestHandler = std::function<void(const Stream&)>;
// The stream ended: RELEASE from the broker (no subscriber left), or the
// connection was lost. Stop publishing it; publish_stream() now refuses it.
using ReleaseHandler = std::function<void(const Stream&)>;

// Monotonic counters; read them at any time from the polling thread.
// Guaranteed messaging (docs/guaranteed.md). The broker's answer to one
// guaranteed publish: OK once it is durable in every queue its topic
// matches; otherwise why not (QUEUE_FULL, DISK_FULL, NOT_AUTHORIZED, NO_STORE, ...).
struct PublishAnswer {
  uint64_t message_id = 0;
  wire::Code code = wire::Code::Ok;
  std::string_view text;
};
using PublishAckHandler = std::function<void(const PublishAnswer&)>;

// One message of a bound queue. Acknowledge it with Client::ack(bind_id, seq).
struct QueueMessage {
  uint32_t bind_id = 0;
  std::string_view queue;
  uint64_t seq = 0;           // the queue's sequence number
  uint64_t timestamp_ns = 0;  // when the broker stored it
  bool redelivered = false;   // it may have been delivered before
  std::string_view topic;
  std::span<const uint8_t> payload;
};
using QueueHandler = std::function<void(const QueueMessage&)>;

// What a binding asks besides its queue (Client::bind; docs/guaranteed.md).
struct BindOptions {
  uint32_t window = 0;  // messages unacknowledged at once at most (0 = the broker's maximum)
  std::string topic;    // not empty: the queue is a durable topic subscription of this topic
  wire::ReplayFrom replay = wire::ReplayFrom::None;  // replay from a seq or a time (ns since the epoch)
  uint64_t from = 0;
};

struct Counters {
  uint64_t messages = 0;        // delivered to a handler (images + updates + statuses)
  uint64_t images = 0;
  uint64_t updates = 0;
  uint64_t statuses = 0;
  uint64_t gaps = 0;            // updates whose seq was not last+1 (announced ones included)
  uint64_t announced_gaps = 0;  // of which announced by STATUS MESSAGES_DROPPED
  uint64_t unrouted = 0;        // channel messages no live subscription matched (e.g. in-flight unsubscribe)
  uint64_t reconnects = 0;      // successful reconnections (not the first connect)
  uint64_t published = 0;       // PUBLISH frames buffered
  uint64_t publish_rejected = 0;// publish() refused: not connected or output buffer full
  uint64_t heartbeats_sent = 0;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  uint64_t errors = 0;          // ERROR frames received
  uint64_t guaranteed_sent = 0;     // GUARANTEED_PUBLISH frames sent, retransmissions included
  uint64_t guaranteed_acked = 0;    // answered OK (durable)
  uint64_t guaranteed_refused = 0;  // answered with a refusal
  uint64_t queue_messages = 0;      // DELIVER frames handed to a queue handler
  uint64_t requests = 0;        // REQUEST frames received (interactive provider)
  uint64_t releases = 0;        // streams ended by RELEASE
  uint64_t streams_lost = 0;    // open streams ended by a lost connection
};

}  // namespace tw::client
