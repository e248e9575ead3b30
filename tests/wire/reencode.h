// Decode a frame with the decoder for its type, then encode the result again.
// The wire tests and the frame-decoder fuzzer both use this to check that
// every decoder is the exact inverse of its encoder.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>

#include "tickwire/wire/codec.h"
#include "tickwire/wire/guaranteed.h"

namespace tw::wiretest {

template <typename Msg>
size_t decode_then_encode(const wire::Frame& f, std::span<uint8_t> out) {
  Msg m;
  if (!wire::decode(f, m)) return 0;
  return wire::encode(out, m);
}

// The re-encoded frame size, or 0 when the frame does not decode (unknown
// types included). HEARTBEAT has no decoder: it is valid only with no body.
inline size_t reencode(const wire::Frame& f, std::span<uint8_t> out) {
  using wire::MsgType;
  switch (f.type) {
    case MsgType::Hello: return decode_then_encode<wire::Hello>(f, out);
    case MsgType::Welcome: return decode_then_encode<wire::Welcome>(f, out);
    case MsgType::Subscribe:
    case MsgType::Unsubscribe: {
      wire::Subscribe m;
      return wire::decode(f, m) ? wire::encode(out, f.type, m) : 0;
    }
    case MsgType::Snapshot: return decode_then_encode<wire::Snapshot>(f, out);
    case MsgType::Register: return decode_then_encode<wire::Register>(f, out);
    case MsgType::Publish: return decode_then_encode<wire::Publish>(f, out);
    case MsgType::Heartbeat: return f.body.empty() && f.flags == 0 ? wire::encode_heartbeat(out) : 0;
    case MsgType::Ack: return decode_then_encode<wire::Ack>(f, out);
    case MsgType::Channel: return decode_then_encode<wire::ChannelIntro>(f, out);
    case MsgType::Image: return decode_then_encode<wire::Image>(f, out);
    case MsgType::Update: return decode_then_encode<wire::Update>(f, out);
    case MsgType::Status: return decode_then_encode<wire::StatusMsg>(f, out);
    case MsgType::Error: return decode_then_encode<wire::ErrorMsg>(f, out);
    case MsgType::Provide: return decode_then_encode<wire::Provide>(f, out);
    case MsgType::Withdraw: return decode_then_encode<wire::Withdraw>(f, out);
    case MsgType::StreamStatus: return decode_then_encode<wire::StreamStatus>(f, out);
    case MsgType::ListChannels: return decode_then_encode<wire::ListChannels>(f, out);
    case MsgType::Reload: return decode_then_encode<wire::ReloadMsg>(f, out);
    case MsgType::Request: return decode_then_encode<wire::Request>(f, out);
    case MsgType::Release: return decode_then_encode<wire::ReleaseMsg>(f, out);
    case MsgType::ChannelInfo: return decode_then_encode<wire::ChannelInfo>(f, out);
    case MsgType::GuaranteedPublish: return decode_then_encode<wire::GuaranteedPublish>(f, out);
    case MsgType::Bind: return decode_then_encode<wire::Bind>(f, out);
    case MsgType::Unbind: return decode_then_encode<wire::Unbind>(f, out);
    case MsgType::ConsumerAck:
    case MsgType::Nack: {
      wire::ConsumerAck m;
      return wire::decode(f, m) ? wire::encode(out, f.type, m) : 0;
    }
    case MsgType::PublishAck: return decode_then_encode<wire::PublishAck>(f, out);
    case MsgType::Deliver: return decode_then_encode<wire::Deliver>(f, out);
  }
  return 0;
}

// Decoders reject flags a type does not define, so a decodable frame
// re-encodes byte for byte.
inline bool same_frame_bytes(std::span<const uint8_t> original, std::span<const uint8_t> reencoded,
                             wire::MsgType /*type*/) {
  return original.size() == reencoded.size() && std::equal(original.begin(), original.end(), reencoded.begin());
}

}  // namespace tw::wiretest
