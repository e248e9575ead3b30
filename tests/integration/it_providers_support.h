// Shared steps of the interactive-provider integration tests (it10-it13).
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "integration/it_support.h"
#include "testlib/provider.h"

namespace tw::it {

// Opens a provider connection (HELLO with `heartbeat_ms`, 0 = the broker's) and PROVIDEs `service`.
inline void open_provider(testing::ProviderClient& p, uint16_t port, const std::string& name,
                          const std::string& service = "SVC", uint32_t heartbeat_ms = 0) {
  std::string why;
  ASSERT_TRUE(p.open(port, name, heartbeat_ms, &why)) << why;
  auto ack = p.provide(1, service);
  ASSERT_TRUE(ack);
  ASSERT_EQ(ack->code, wire::Code::Ok) << ack->text;
}

inline void open_subscriber(RawClient& c, uint16_t port, const std::string& name) {
  std::string why;
  ASSERT_TRUE(open_client(c, port, name, &why)) << why;
}

inline void subscribe_ok(RawClient& c, uint32_t request_id, const std::string& pattern) {
  auto ack = c.subscribe(request_id, pattern);
  ASSERT_TRUE(ack) << "no ACK for SUBSCRIBE " << pattern;
  ASSERT_EQ(ack->code, wire::Code::Ok) << ack->text;
}

}  // namespace tw::it
