// Helpers shared by the wire codec tests: hex dumps, a sample frame of every
// message type, and a frame rewriter for building broken frames.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tickwire/wire/codec.h"

namespace tw::wiretest {

using Bytes = std::vector<uint8_t>;

// "15 00 00 00 01 ..." : the form docs/protocol.md quotes.
std::string hex(std::span<const uint8_t> bytes);
Bytes from_hex(std::string_view text);  // whitespace ignored

// Runs an encoder into a large scratch buffer and keeps exactly the frame.
Bytes encoded(const std::function<size_t(std::span<uint8_t>)>& encode_fn);

// A field-list payload {BID(22) = 123.45}, written out by hand so these tests
// depend on the wire module only.
Bytes sample_payload();

struct Sample {
  std::string name;
  wire::MsgType type;
  Bytes frame;
  // Body bytes every decode needs; for PUBLISH/IMAGE/UPDATE the payload after
  // them is "the rest of the frame", so shorter bodies still decode.
  size_t fixed_body = 0;
  bool payload_is_rest = false;
};
// One frame of every message type (SUBSCRIBE and UNSUBSCRIBE both, PUBLISH
// with and without the image flag), each with a distinct non-zero content.
std::vector<Sample> all_samples();

// The frame with its body replaced; the length field is rewritten to match.
Bytes with_body(const Bytes& frame, const Bytes& body);
Bytes body_of(const Bytes& frame);

// split_frame on a whole buffer that must hold exactly one frame.
wire::Frame split_one(const Bytes& frame);

}  // namespace tw::wiretest
