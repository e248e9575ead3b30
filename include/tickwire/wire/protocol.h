// The Tickwire native protocol, versions 1 to 5. docs/protocol.md is the byte-exact
// specification; this header is its code form. All integers little-endian.
//
// Every frame:
//   0        4     5      6          8
//   +--------+-----+------+----------+---------- ... ----+
//   | length | type| flags| reserved |       body        |
//   |  u32   | u8  |  u8  | u16 = 0  |                   |
//   +--------+-----+------+----------+---------- ... ----+
//   length counts the whole frame, header included (>= 8).
//
// str16 = u16 byte length + UTF-8 bytes (no terminator).
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

namespace tw::wire {

// Version 2 adds credentials to HELLO (kHelloCredentials); a version-1
// client is served as before where the broker does not require them.
// Version 3 adds the broker's other limits to WELCOME (Welcome::limits); a
// client that offers at most version 2 gets the version-2 WELCOME.
// Version 4 adds guaranteed messaging (wire/guaranteed.h): its frames are
// refused as unknown on a connection that settled on an older version.
// Version 5 adds BIND's durable topic subscription and replay, and UNBIND's
// unsubscribe (flag bits, refused as malformed on an older connection).
inline constexpr uint16_t kProtocolVersion = 5;
inline constexpr uint16_t kGuaranteedVersion = 4;
inline constexpr uint16_t kReplayVersion = 5;
inline constexpr uint16_t kWelcomeLimitsVersion = 3;
inline constexpr uint16_t kMinProtocolVersion = 1;
inline constexpr size_t kHeaderSize = 8;
inline constexpr uint32_t kDefaultMaxFrame = 1u << 20;

enum class MsgType : uint8_t {
  // client -> broker
  Hello = 0x01,
  Subscribe = 0x02,
  Unsubscribe = 0x03,
  Snapshot = 0x04,
  Register = 0x05,
  Publish = 0x06,
  Provide = 0x08,
  Withdraw = 0x09,
  StreamStatus = 0x0A,
  ListChannels = 0x0B,
  Reload = 0x0C,  // version 2: an admin user reloads the users file
  // version 4: guaranteed messaging (wire/guaranteed.h)
  GuaranteedPublish = 0x0D,
  Bind = 0x0E,
  Unbind = 0x0F,
  ConsumerAck = 0x10,
  Nack = 0x11,
  // both directions
  Heartbeat = 0x07,
  // broker -> client
  Welcome = 0x81,
  Ack = 0x82,
  Channel = 0x83,
  Image = 0x84,
  Update = 0x85,
  Status = 0x86,
  Error = 0x87,
  Request = 0x88,
  Release = 0x89,
  ChannelInfo = 0x8A,
  PublishAck = 0x8B,  // version 4
  Deliver = 0x8C,     // version 4
};

// Error and status codes, carried by ACK, STATUS and ERROR frames.
enum class Code : uint16_t {
  Ok = 0,
  MalformedFrame = 1,
  FrameTooLarge = 2,
  UnknownType = 3,
  UnsupportedVersion = 4,
  HelloExpected = 5,
  InvalidTopic = 6,
  TooManySubscriptions = 7,
  UnknownPublishId = 8,
  BadPayload = 9,
  IdleTimeout = 10,
  SlowConsumer = 11,
  ServerShutdown = 12,
  TooManyConnections = 13,
  NotFound = 14,
  NotSubscribed = 15,
  TooManyRegistrations = 16,
  TooManyChannels = 17,
  KindMismatch = 18,
  RequestTimeout = 19,     // no provider answered a channel request in time
  ProviderLost = 20,       // the channel's provider disconnected or withdrew
  NoProvider = 21,         // the service has no provider that can serve the topic
  MessagesDropped = 22,    // STATUS OK: the broker dropped messages of a slow subscriber (a known gap)
  DelayCapacity = 23,      // ACK: delayed data is over delay_max_bytes, no new delayed subscriptions
  ChannelQuota = 24,       // ERROR: the connection created max_channels_per_connection channels already
  InvalidUtf8 = 25,        // ERROR: a topic, name or STRING value is not valid UTF-8
  NotAuthorized = 26,      // ACK, STATUS CLOSED, ERROR: the user is not entitled (docs/security.md)
  AuthFailed = 27,         // ERROR: unknown user, wrong password, or credentials required
  NotProvider = 28,        // ERROR: REGISTER into a service's topic by a user not entitled to provide it
  ClosedByAdmin = 29,      // ERROR, STATUS CLOSED: an administrator disconnected the connection or closed the channel
  DelayHistory = 30,       // STATUS OK: a new delayed subscription has no history yet; the text says when it starts
  QueueFull = 31,          // PUBLISH_ACK: a queue the message matches is at its max_messages or max_bytes
  DiskFull = 32,           // PUBLISH_ACK: the store's disk has no room; nothing of the message counts as stored
  NoStore = 33,            // PUBLISH_ACK, ACK of BIND: the broker has no store (store.dir unset)
  StoreFailed = 34,        // PUBLISH_ACK: the store could not write or sync (an I/O error other than a full disk)
  NotPrimary = 35,         // ERROR: this broker is an HA pair's backup; the text names the primary when known
  EndpointMismatch = 36,   // ACK of BIND: a queue bound as a durable subscription, or a durable subscription another binding holds with another topic
};

const char* code_name(Code code);
const char* type_name(MsgType type);  // "HELLO", ... for logs and tests

enum class PayloadKind : uint8_t { FieldList = 0, Opaque = 1 };
enum class ChannelState : uint8_t { Ok = 0, Stale = 1, Closed = 2 };
const char* state_name(ChannelState state);  // "OK", "STALE", "CLOSED"

// PUBLISH flags
inline constexpr uint8_t kPublishImage = 0x01;  // replace the cached image instead of merging

// What the broker does with a subscription's stream when the connection's
// output queue is over max_output_buffer (docs/protocol.md, "Slow consumers").
// Stricter policies have higher values: disconnect > drop > conflate.
enum class SlowPolicy : uint8_t { Default = 0, Conflate = 1, Drop = 2, Disconnect = 3 };
// SUBSCRIBE flags: bits 0-1 carry the SlowPolicy; bit 2 says a u32
// conflate_ms follows the pattern; bit 3 says a u32 delay_ms follows (after
// conflate_ms when both are present); other bits are malformed.
inline constexpr uint8_t kSubscribePolicyMask = 0x03;
inline constexpr uint8_t kSubscribeConflate = 0x04;
inline constexpr uint8_t kSubscribeDelay = 0x08;

// Publish ids with this bit set are stream ids: the broker assigns them in
// REQUEST to an interactive provider (stream id = kStreamIdBit | channel id).
// REGISTER uses ids below it.
inline constexpr uint32_t kStreamIdBit = 0x8000'0000u;

// The longest client name HELLO may carry, bytes (longer: MALFORMED_FRAME).
inline constexpr size_t kMaxClientName = 255;

// Body layouts (after the 8-byte header), in field order.
// HELLO flags: bit 0 says str16 user, str16 password follow client_name
// (protocol version 2; a HELLO with it must offer max_version >= 2).
inline constexpr uint8_t kHelloCredentials = 0x01;
struct Hello {  // u16 min_version, u16 max_version, u32 heartbeat_ms, str16 client_name, [str16 user, str16 password]
  uint16_t min_version = kMinProtocolVersion;
  uint16_t max_version = kProtocolVersion;
  uint32_t heartbeat_ms = 0;
  std::string_view client_name;
  bool credentials = false;  // flag kHelloCredentials: user and password are on the wire
  std::string_view user;
  std::string_view password;
};
// What a version-3 WELCOME adds after server_name, in this order, all u32.
struct WelcomeLimits {
  uint32_t max_registrations = 0;            // publish ids 1 .. this
  uint32_t max_channels = 0;                 // channels in the whole broker
  uint32_t max_channels_per_connection = 0;  // new topics one connection may create by REGISTER
  uint32_t max_topic_length = 0;             // bytes
  uint32_t max_topic_depth = 0;              // levels
  uint32_t idle_timeout_ms = 0;              // this connection is closed after this long without a frame
};
inline constexpr size_t kWelcomeLimitsSize = 6 * 4;
// u16 version, u32 heartbeat_ms, u32 max_frame, u32 max_subscriptions, str16 server_name,
// then from version 3 on: WelcomeLimits (6 x u32). The version field decides the layout.
struct Welcome {
  uint16_t version = kProtocolVersion;
  uint32_t heartbeat_ms = 0;
  uint32_t max_frame = 0;
  uint32_t max_subscriptions = 0;
  std::string_view server_name;
  WelcomeLimits limits;  // on the wire only when version >= kWelcomeLimitsVersion
};
struct Subscribe {  // u32 request_id, str16 pattern, [u32 conflate_ms], [u32 delay_ms]   (also UNSUBSCRIBE); SUBSCRIBE flags: policy, conflate, delay
  uint32_t request_id = 0;
  std::string_view pattern;
  SlowPolicy policy = SlowPolicy::Default;  // SUBSCRIBE only; UNSUBSCRIBE carries flags 0
  // SUBSCRIBE only: at most one merged refresh per channel per this many ms
  // (0 = real time). On the wire only when non-zero (flag kSubscribeConflate).
  uint32_t conflate_ms = 0;
  // SUBSCRIBE only: the stream as it was this many ms ago (0 = live). On the
  // wire only when non-zero (flag kSubscribeDelay).
  uint32_t delay_ms = 0;
};
struct Snapshot {  // u32 request_id, str16 topic
  uint32_t request_id = 0;
  std::string_view topic;
};
struct Register {  // u32 publish_id, u8 kind, str16 topic
  uint32_t publish_id = 0;
  PayloadKind kind = PayloadKind::FieldList;
  std::string_view topic;
};
struct Publish {  // u32 publish_id, payload (rest of frame); flags: kPublishImage
  uint32_t publish_id = 0;
  bool image = false;
  std::span<const uint8_t> payload;
};
struct Ack {  // u32 request_id, u16 code, str16 text
  uint32_t request_id = 0;
  Code code = Code::Ok;
  std::string_view text;
};
struct ChannelIntro {  // u32 channel_id, u8 kind, str16 topic
  uint32_t channel_id = 0;
  PayloadKind kind = PayloadKind::FieldList;
  std::string_view topic;
};
struct Image {  // u32 channel_id, u64 seq, u32 request_id, payload (rest of frame)
  uint32_t channel_id = 0;
  uint64_t seq = 0;
  uint32_t request_id = 0;
  std::span<const uint8_t> payload;
};
struct Update {  // u32 channel_id, u64 seq, payload (rest of frame)
  uint32_t channel_id = 0;
  uint64_t seq = 0;
  std::span<const uint8_t> payload;
};
struct StatusMsg {  // u32 channel_id, u8 state, u16 code, str16 text
  uint32_t channel_id = 0;
  ChannelState state = ChannelState::Ok;
  Code code = Code::Ok;
  std::string_view text;
};
struct ErrorMsg {  // u16 code, str16 text
  Code code = Code::Ok;
  std::string_view text;
};

// Interactive providers.
struct Provide {  // u32 request_id, str16 service, str16 pattern ("" = every topic of the service)
  uint32_t request_id = 0;
  std::string_view service;
  std::string_view pattern;
};
struct Withdraw {  // u32 request_id, str16 service
  uint32_t request_id = 0;
  std::string_view service;
};
struct Request {  // u32 stream_id, str16 topic
  uint32_t stream_id = 0;
  std::string_view topic;
};
struct ReleaseMsg {  // u32 stream_id
  uint32_t stream_id = 0;
};
struct StreamStatus {  // u32 stream_id, u8 state, u16 code, str16 text
  uint32_t stream_id = 0;
  ChannelState state = ChannelState::Ok;
  Code code = Code::Ok;
  std::string_view text;
};
// Administration.
struct ReloadMsg {  // u32 request_id; answered by ACK once the users file was read again (or not)
  uint32_t request_id = 0;
};
struct ListChannels {  // u32 request_id, str16 service ("" = all)
  uint32_t request_id = 0;
  std::string_view service;
};
struct ChannelInfo {  // u32 request_id, u32 channel_id, u8 state, u32 subscribers, u64 seq, u32 rate, str16 topic, str16 provider
  uint32_t request_id = 0;
  uint32_t channel_id = 0;
  ChannelState state = ChannelState::Ok;
  uint32_t subscribers = 0;
  uint64_t seq = 0;
  uint32_t rate = 0;  // updates in the last full second
  std::string_view topic;
  std::string_view provider;  // "" for broadcast channels
};

inline constexpr size_t kUpdateFixedSize = kHeaderSize + 4 + 8;  // header, channel_id, seq
inline constexpr size_t kImageFixedSize = kHeaderSize + 4 + 8 + 4;
inline constexpr size_t kPublishFixedSize = kHeaderSize + 4;
static_assert(kUpdateFixedSize == 20 && kImageFixedSize == 24 && kPublishFixedSize == 12);

}  // namespace tw::wire
