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
  auto status = [](UpgradeRequest r) { return answer_upgrade(r, "mqtt").status; };
  UpgradeRequest r = mqtt_request();
  r.method = "POST";
  EXPECT_EQ(status(r), 400);
  r = mqtt_request();
  r.upgrade = "h2c";
  EXPECT_EQ(status(r), 400);
  r = mqtt_request();
  r.connection = "keep-alive";
  EXPECT_EQ(status(r), 400);
  r = mqtt_request();
  r.version = "8";
  EXPECT_EQ(status(r), 426);
  r = mqtt_request();
  r.key = "short";
  EXPECT_EQ(status(r), 400);
  r = mqtt_request();
  r.protocols = "";
  EXPECT_EQ(status(r), 400);
  r.protocols = "wamp";
  EXPECT_EQ(status(r), 400);
}

}  // namespace
}  // namespace tw::websocket
