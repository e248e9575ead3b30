#include "websocket/handshake.h"

#include <gtest/gtest.h>

namespace tw::websocket {
namespace {

// RFC 6455 section 1.3's example key and answer.
constexpr std::string_view kKey = "dGhlIHNhbXBsZSBub25jZQ==";

UpgradeRequest mqtt_request() { return {"GET", "websocket", "keep-alive, Upgrade", "13", kKey, "mqttv3.1, mqtt"}; }

TEST(Handshake, AcceptKeyIsTheRfcExample) { EXPECT_EQ(accept_key(kKey), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="); }

TEST(Handshake, ChoosesTheWantedSubprotocol) {
  HandshakeAnswer a = answer_upgrade(mqtt_request(), "mqtt");
  ASSERT_EQ(a.status, 101) << a.error;
  EXPECT_EQ(a.protocol, "mqtt");
  std::string response = switching_protocols(a);
  EXPECT_NE(response.find("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), std::string::npos);
  EXPECT_NE(response.find("Sec-WebSocket-Protocol: mqtt\r\n"), std::string::npos);
  EXPECT_EQ(answer_upgrade(mqtt_request(), "").protocol, "");  // a path without one chooses none
}

TEST(Handshake, RefusesWhatIsNotAWebSocketUpgrade) {
  struct Case {
    void (*spoil)(UpgradeRequest&);
    int status;
  };
  const Case cases[] = {
      {[](UpgradeRequest& r) { r.method = "POST"; }, 400},
      {[](UpgradeRequest& r) { r.upgrade = "h2c"; }, 400},
      {[](UpgradeRequest& r) { r.connection = "keep-alive"; }, 400},
      {[](UpgradeRequest& r) { r.version = "8"; }, 426},
      {[](UpgradeRequest& r) { r.key = "short"; }, 400},
      {[](UpgradeRequest& r) { r.protocols = ""; }, 400},  // mqtt is required
      {[](UpgradeRequest& r) { r.protocols = "wamp"; }, 400},
  };
  for (const Case& c : cases) {
    UpgradeRequest r = mqtt_request();
    c.spoil(r);
    HandshakeAnswer a = answer_upgrade(r, "mqtt");
    EXPECT_EQ(a.status, c.status) << a.error;
    EXPECT_FALSE(a.error.empty());
  }
}

}  // namespace
}  // namespace tw::websocket
