// A protocol that exists only for tests: one text line per request and per
// message, to show that a protocol joins the broker through its table
// entry alone (tier/protocols.h, docs/ARCHITECTURE.md "Adding a protocol").
//   client: "SUB <pattern>\n", "PUB <topic> <text>\n"
//   broker: "OK <pattern>\n" or "ERR <code> <text>\n" for a SUB, then
//           "IMAGE <topic> <seq> <text>\n", "UPDATE <topic> <seq> <text>\n",
//           "STATUS <topic> <state>\n"
// No authentication (the test broker runs without), opaque payloads only.
#pragma once
#include "tier/protocols.h"

namespace tw::testing {

// Its table entry: name "line", encoder slot `slot` (one the built-in protocols leave free).
tier::Protocol line_protocol(uint8_t slot);

}  // namespace tw::testing
