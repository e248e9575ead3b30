#include "tickwire/wire/codec.h"

#include "tickwire/wire/bytes.h"
#include "wire/frame_writer.h"

namespace tw::wire {

const char* code_name(Code code) {
  switch (code) {
    case Code::Ok: return "OK";
    case Code::MalformedFrame: return "MALFORMED_FRAME";
    case Code::FrameTooLarge: return "FRAME_TOO_LARGE";
    case Code::UnknownType: return "UNKNOWN_TYPE";
    case Code::UnsupportedVersion: return "UNSUPPORTED_VERSION";
    case Code::HelloExpected: return "HELLO_EXPECTED";
    case Code::InvalidTopic: return "INVALID_TOPIC";
    case Code::TooManySubscriptions: return "TOO_MANY_SUBSCRIPTIONS";
    case Code::UnknownPublishId: return "UNKNOWN_PUBLISH_ID";
    case Code::BadPayload: return "BAD_PAYLOAD";
    case Code::IdleTimeout: return "IDLE_TIMEOUT";
    case Code::SlowConsumer: return "SLOW_CONSUMER";
    case Code::ServerShutdown: return "SERVER_SHUTDOWN";
    case Code::TooManyConnections: return "TOO_MANY_CONNECTIONS";
    case Code::NotFound: return "NOT_FOUND";
    case Code::NotSubscribed: return "NOT_SUBSCRIBED";
    case Code::TooManyRegistrations: return "TOO_MANY_REGISTRATIONS";
    case Code::TooManyChannels: return "TOO_MANY_CHANNELS";
    case Code::KindMismatch: return "KIND_MISMATCH";
    case Code::RequestTimeout: return "REQUEST_TIMEOUT";
    case Code::ProviderLost: return "PROVIDER_LOST";
    case Code::NoProvider: return "NO_PROVIDER";
    case Code::MessagesDropped: return "MESSAGES_DROPPED";
    case Code::DelayCapacity: return "DELAY_CAPACITY";
    case Code::ChannelQuota: return "CHANNEL_QUOTA";
    case Code::InvalidUtf8: return "INVALID_UTF8";
    case Code::NotAuthorized: return "NOT_AUTHORIZED";
    case Code::AuthFailed: return "AUTH_FAILED";
    case Code::NotProvider: return "NOT_PROVIDER";
    case Code::ClosedByAdmin: return "CLOSED_BY_ADMIN";
    case Code::DelayHistory: return "DELAY_HISTORY";
    case Code::QueueFull: return "QUEUE_FULL";
    case Code::DiskFull: return "DISK_FULL";
    case Code::NoStore: return "NO_STORE";
    case Code::StoreFailed: return "STORE_FAILED";
    case Code::NotPrimary: return "NOT_PRIMARY";
    case Code::EndpointMismatch: return "ENDPOINT_MISMATCH";
  }
  return "UNKNOWN_CODE";
}

const char* type_name(MsgType type) {
  switch (type) {
    case MsgType::Hello: return "HELLO";
    case MsgType::Subscribe: return "SUBSCRIBE";
    case MsgType::Unsubscribe: return "UNSUBSCRIBE";
    case MsgType::Snapshot: return "SNAPSHOT";
    case MsgType::Register: return "REGISTER";
    case MsgType::Publish: return "PUBLISH";
    case MsgType::Provide: return "PROVIDE";
    case MsgType::Withdraw: return "WITHDRAW";
    case MsgType::StreamStatus: return "STREAM_STATUS";
    case MsgType::ListChannels: return "LIST_CHANNELS";
    case MsgType::Reload: return "RELOAD";
    case MsgType::GuaranteedPublish: return "GUARANTEED_PUBLISH";
    case MsgType::Bind: return "BIND";
    case MsgType::Unbind: return "UNBIND";
    case MsgType::ConsumerAck: return "CONSUMER_ACK";
    case MsgType::Nack: return "NACK";
    case MsgType::Heartbeat: return "HEARTBEAT";
    case MsgType::Welcome: return "WELCOME";
    case MsgType::Ack: return "ACK";
    case MsgType::Channel: return "CHANNEL";
    case MsgType::Image: return "IMAGE";
    case MsgType::Update: return "UPDATE";
    case MsgType::Status: return "STATUS";
    case MsgType::Error: return "ERROR";
    case MsgType::Request: return "REQUEST";
    case MsgType::Release: return "RELEASE";
    case MsgType::ChannelInfo: return "CHANNEL_INFO";
    case MsgType::PublishAck: return "PUBLISH_ACK";
    case MsgType::Deliver: return "DELIVER";
  }
  return "UNKNOWN";
}

const char* state_name(ChannelState state) {
  switch (state) {
    case ChannelState::Ok: return "OK";
    case ChannelState::Stale: return "STALE";
    case ChannelState::Closed: return "CLOSED";
  }
  return "UNKNOWN";
}

uint32_t peek_length(std::span<const uint8_t> in) {
  if (in.size() < 4) return 0;
  ByteReader r(in);
  return r.u32();
}

SplitResult split_frame(std::span<const uint8_t> in, uint32_t max_frame, Frame& out) {
  if (in.size() < kHeaderSize) return SplitResult::NeedMore;
  ByteReader r(in);
  uint32_t length = r.u32();
  uint8_t type = r.u8();
  uint8_t flags = r.u8();
  uint16_t reserved = r.u16();
  if (length < kHeaderSize || reserved != 0) return SplitResult::Malformed;
  if (length > max_frame) return SplitResult::TooLarge;
  if (in.size() < length) return SplitResult::NeedMore;
  out.type = static_cast<MsgType>(type);
  out.flags = flags;
  out.body = in.subspan(kHeaderSize, length - kHeaderSize);
  out.size = length;
  return SplitResult::Frame;
}

namespace {

bool valid_kind(uint8_t k) { return k <= static_cast<uint8_t>(PayloadKind::Opaque); }
bool valid_state(uint8_t s) { return s <= static_cast<uint8_t>(ChannelState::Closed); }

}  // namespace

bool decode(const Frame& f, Hello& m) {
  ByteReader r(f.body);
  m.min_version = r.u16();
  m.max_version = r.u16();
  m.heartbeat_ms = r.u32();
  m.client_name = r.str16();
  m.credentials = (f.flags & kHelloCredentials) != 0;
  m.user = m.credentials ? r.str16() : std::string_view{};
  m.password = m.credentials ? r.str16() : std::string_view{};
  if (m.credentials && m.max_version < 2) return false;
  return (f.flags & ~kHelloCredentials) == 0 && r.at_end();
}

bool decode(const Frame& f, Welcome& m) {
  ByteReader r(f.body);
  m.version = r.u16();
  m.heartbeat_ms = r.u32();
  m.max_frame = r.u32();
  m.max_subscriptions = r.u32();
  m.server_name = r.str16();
  m.limits = {};
  if (m.version >= kWelcomeLimitsVersion) {
    m.limits.max_registrations = r.u32();
    m.limits.max_channels = r.u32();
    m.limits.max_channels_per_connection = r.u32();
    m.limits.max_topic_length = r.u32();
    m.limits.max_topic_depth = r.u32();
    m.limits.idle_timeout_ms = r.u32();
  }
  return f.flags == 0 && r.at_end();
}

bool decode(const Frame& f, Subscribe& m) {
  ByteReader r(f.body);
  m.request_id = r.u32();
  m.pattern = r.str16();
  // Only SUBSCRIBE defines flags (policy, conflation, delay); UNSUBSCRIBE's must be 0.
  const uint8_t allowed =
      f.type == MsgType::Subscribe ? (kSubscribePolicyMask | kSubscribeConflate | kSubscribeDelay) : 0;
  m.policy = static_cast<SlowPolicy>(f.flags & kSubscribePolicyMask);
  const bool conflate = (f.flags & kSubscribeConflate) != 0;
  m.conflate_ms = conflate ? r.u32() : 0;
  const bool delay = (f.flags & kSubscribeDelay) != 0;
  m.delay_ms = delay ? r.u32() : 0;
  // A zero interval or delay is never encoded (the field is omitted): keeps re-encoding byte-exact.
  if ((conflate && m.conflate_ms == 0) || (delay && m.delay_ms == 0)) return false;
  return (f.flags & ~allowed) == 0 && r.at_end();
}

bool decode(const Frame& f, Snapshot& m) {
  ByteReader r(f.body);
  m.request_id = r.u32();
  m.topic = r.str16();
  return f.flags == 0 && r.at_end();
}

bool decode(const Frame& f, Register& m) {
  ByteReader r(f.body);
  m.publish_id = r.u32();
  uint8_t kind = r.u8();
  m.kind = static_cast<PayloadKind>(kind);
  m.topic = r.str16();
  return f.flags == 0 && r.at_end() && valid_kind(kind);
}

bool decode(const Frame& f, Publish& m) {
  ByteReader r(f.body);
  m.publish_id = r.u32();
  m.image = (f.flags & kPublishImage) != 0;
  m.payload = r.rest();
  return !r.failed() && (f.flags & ~kPublishImage) == 0;
}

bool decode(const Frame& f, Ack& m) {
  ByteReader r(f.body);
  m.request_id = r.u32();
  m.code = static_cast<Code>(r.u16());
  m.text = r.str16();
  return f.flags == 0 && r.at_end();
}

bool decode(const Frame& f, ChannelIntro& m) {
  ByteReader r(f.body);
  m.channel_id = r.u32();
  uint8_t kind = r.u8();
  m.kind = static_cast<PayloadKind>(kind);
  m.topic = r.str16();
  return f.flags == 0 && r.at_end() && valid_kind(kind);
}

bool decode(const Frame& f, Image& m) {
  ByteReader r(f.body);
  m.channel_id = r.u32();
  m.seq = r.u64();
  m.request_id = r.u32();
  m.payload = r.rest();
  return f.flags == 0 && !r.failed();
}

bool decode(const Frame& f, Update& m) {
  ByteReader r(f.body);
  m.channel_id = r.u32();
  m.seq = r.u64();
  m.payload = r.rest();
  return f.flags == 0 && !r.failed();
}

bool decode(const Frame& f, StatusMsg& m) {
  ByteReader r(f.body);
  m.channel_id = r.u32();
  uint8_t state = r.u8();
  m.state = static_cast<ChannelState>(state);
  m.code = static_cast<Code>(r.u16());
  m.text = r.str16();
  return f.flags == 0 && r.at_end() && valid_state(state);
}

bool decode(const Frame& f, ErrorMsg& m) {
  ByteReader r(f.body);
  m.code = static_cast<Code>(r.u16());
  m.text = r.str16();
  return f.flags == 0 && r.at_end();
}

bool decode(const Frame& f, Provide& m) {
  ByteReader r(f.body);
  m.request_id = r.u32();
  m.service = r.str16();
  m.pattern = r.str16();
  return f.flags == 0 && r.at_end();
}

bool decode(const Frame& f, Withdraw& m) {
  ByteReader r(f.body);
  m.request_id = r.u32();
  m.service = r.str16();
  return f.flags == 0 && r.at_end();
}

bool decode(const Frame& f, Request& m) {
  ByteReader r(f.body);
  m.stream_id = r.u32();
  m.topic = r.str16();
  return f.flags == 0 && r.at_end();
}

bool decode(const Frame& f, ReleaseMsg& m) {
  ByteReader r(f.body);
  m.stream_id = r.u32();
  return f.flags == 0 && r.at_end();
}

bool decode(const Frame& f, StreamStatus& m) {
  ByteReader r(f.body);
  m.stream_id = r.u32();
  uint8_t state = r.u8();
  m.state = static_cast<ChannelState>(state);
  m.code = static_cast<Code>(r.u16());
  m.text = r.str16();
  return f.flags == 0 && r.at_end() && valid_state(state);
}

bool decode(const Frame& f, ListChannels& m) {
  ByteReader r(f.body);
  m.request_id = r.u32();
  m.service = r.str16();
  return f.flags == 0 && r.at_end();
}

bool decode(const Frame& f, ReloadMsg& m) {
  ByteReader r(f.body);
  m.request_id = r.u32();
  return f.flags == 0 && r.at_end();
}

bool decode(const Frame& f, ChannelInfo& m) {
  ByteReader r(f.body);
  m.request_id = r.u32();
  m.channel_id = r.u32();
  uint8_t state = r.u8();
  m.state = static_cast<ChannelState>(state);
  m.subscribers = r.u32();
  m.seq = r.u64();
  m.rate = r.u32();
  m.topic = r.str16();
  m.provider = r.str16();
  return f.flags == 0 && r.at_end() && valid_state(state);
}

size_t encode(std::span<uint8_t> out, const Hello& m) {
  auto w = begin_frame(out, MsgType::Hello, m.credentials ? kHelloCredentials : 0);
  w.u16(m.min_version);
  w.u16(m.max_version);
  w.u32(m.heartbeat_ms);
  w.str16(m.client_name);
  if (m.credentials) {
    w.str16(m.user);
    w.str16(m.password);
  }
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const Welcome& m) {
  auto w = begin_frame(out, MsgType::Welcome);
  w.u16(m.version);
  w.u32(m.heartbeat_ms);
  w.u32(m.max_frame);
  w.u32(m.max_subscriptions);
  w.str16(m.server_name);
  if (m.version >= kWelcomeLimitsVersion) {
    w.u32(m.limits.max_registrations);
    w.u32(m.limits.max_channels);
    w.u32(m.limits.max_channels_per_connection);
    w.u32(m.limits.max_topic_length);
    w.u32(m.limits.max_topic_depth);
    w.u32(m.limits.idle_timeout_ms);
  }
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, MsgType type, const Subscribe& m) {
  const bool with_options = type == MsgType::Subscribe;
  const bool conflate = with_options && m.conflate_ms != 0;
  const bool delay = with_options && m.delay_ms != 0;
  uint8_t flags = with_options ? static_cast<uint8_t>(static_cast<uint8_t>(m.policy) & kSubscribePolicyMask) : 0;
  if (conflate) flags |= kSubscribeConflate;
  if (delay) flags |= kSubscribeDelay;
  auto w = begin_frame(out, type, flags);
  w.u32(m.request_id);
  w.str16(m.pattern);
  if (conflate) w.u32(m.conflate_ms);
  if (delay) w.u32(m.delay_ms);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const Snapshot& m) {
  auto w = begin_frame(out, MsgType::Snapshot);
  w.u32(m.request_id);
  w.str16(m.topic);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const Register& m) {
  auto w = begin_frame(out, MsgType::Register);
  w.u32(m.publish_id);
  w.u8(static_cast<uint8_t>(m.kind));
  w.str16(m.topic);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const Publish& m) {
  auto w = begin_frame(out, MsgType::Publish, m.image ? kPublishImage : 0);
  w.u32(m.publish_id);
  w.bytes(m.payload);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const Ack& m) {
  auto w = begin_frame(out, MsgType::Ack);
  w.u32(m.request_id);
  w.u16(static_cast<uint16_t>(m.code));
  w.str16(m.text);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const ChannelIntro& m) {
  auto w = begin_frame(out, MsgType::Channel);
  w.u32(m.channel_id);
  w.u8(static_cast<uint8_t>(m.kind));
  w.str16(m.topic);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const Image& m) {
  auto w = begin_frame(out, MsgType::Image);
  w.u32(m.channel_id);
  w.u64(m.seq);
  w.u32(m.request_id);
  w.bytes(m.payload);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const Update& m) {
  auto w = begin_frame(out, MsgType::Update);
  w.u32(m.channel_id);
  w.u64(m.seq);
  w.bytes(m.payload);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const StatusMsg& m) {
  auto w = begin_frame(out, MsgType::Status);
  w.u32(m.channel_id);
  w.u8(static_cast<uint8_t>(m.state));
  w.u16(static_cast<uint16_t>(m.code));
  w.str16(m.text);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const ErrorMsg& m) {
  auto w = begin_frame(out, MsgType::Error);
  w.u16(static_cast<uint16_t>(m.code));
  w.str16(m.text);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const Provide& m) {
  auto w = begin_frame(out, MsgType::Provide);
  w.u32(m.request_id);
  w.str16(m.service);
  w.str16(m.pattern);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const Withdraw& m) {
  auto w = begin_frame(out, MsgType::Withdraw);
  w.u32(m.request_id);
  w.str16(m.service);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const Request& m) {
  auto w = begin_frame(out, MsgType::Request);
  w.u32(m.stream_id);
  w.str16(m.topic);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const ReleaseMsg& m) {
  auto w = begin_frame(out, MsgType::Release);
  w.u32(m.stream_id);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const StreamStatus& m) {
  auto w = begin_frame(out, MsgType::StreamStatus);
  w.u32(m.stream_id);
  w.u8(static_cast<uint8_t>(m.state));
  w.u16(static_cast<uint16_t>(m.code));
  w.str16(m.text);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const ListChannels& m) {
  auto w = begin_frame(out, MsgType::ListChannels);
  w.u32(m.request_id);
  w.str16(m.service);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const ReloadMsg& m) {
  auto w = begin_frame(out, MsgType::Reload);
  w.u32(m.request_id);
  return finish_frame(w);
}

size_t encode(std::span<uint8_t> out, const ChannelInfo& m) {
  auto w = begin_frame(out, MsgType::ChannelInfo);
  w.u32(m.request_id);
  w.u32(m.channel_id);
  w.u8(static_cast<uint8_t>(m.state));
  w.u32(m.subscribers);
  w.u64(m.seq);
  w.u32(m.rate);
  w.str16(m.topic);
  w.str16(m.provider);
  return finish_frame(w);
}

void encode_image_prefix(std::span<uint8_t> out, uint32_t channel_id, uint64_t seq, uint32_t request_id,
                         size_t payload_size) {
  auto w = begin_frame(out.first(kImageFixedSize), MsgType::Image);
  w.u32(channel_id);
  w.u64(seq);
  w.u32(request_id);
  w.patch_u32(0, static_cast<uint32_t>(kImageFixedSize + payload_size));
}

size_t encode_heartbeat(std::span<uint8_t> out) {
  auto w = begin_frame(out, MsgType::Heartbeat);
  return finish_frame(w);
}

}  // namespace tw::wire
