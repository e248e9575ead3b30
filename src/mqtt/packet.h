// MQTT 3.1.1 and 5.0 control packets (OASIS mqtt-v3.1.1-os, mqtt-v5.0-os):
// the decoded forms the codec (codec.h) produces and consumes. Views point
// into the caller's input buffer and are valid only while it is.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace tw::mqtt {

enum class Version : uint8_t { V311 = 4, V5 = 5 };

enum class PacketType : uint8_t {
  Connect = 1, Connack, Publish, Puback, Pubrec, Pubrel, Pubcomp, Subscribe, Suback, Unsubscribe, Unsuback,
  Pingreq, Pingresp, Disconnect, Auth,
};

// MQTT 5 reason codes (section 2.4) the broker uses. MQTT 3.1.1 has its own
// CONNACK return codes (section 3.2.2.3); connack_code_v311 maps them.
enum class Reason : uint8_t {
  Success = 0x00,           // also Granted QoS 0, Normal disconnection
  GrantedQos1 = 0x01,
  GrantedQos2 = 0x02,
  DisconnectWithWill = 0x04,
  NoSubscriptionExisted = 0x11,
  UnspecifiedError = 0x80,
  MalformedPacket = 0x81,
  ProtocolError = 0x82,
  ImplementationSpecificError = 0x83,
  UnsupportedProtocolVersion = 0x84,
  ClientIdentifierNotValid = 0x85,
  BadUserNameOrPassword = 0x86,
  NotAuthorized = 0x87,
  ServerUnavailable = 0x88,
  ServerBusy = 0x89,
  ServerShuttingDown = 0x8B,
  BadAuthenticationMethod = 0x8C,
  KeepAliveTimeout = 0x8D,
  SessionTakenOver = 0x8E,
  TopicFilterInvalid = 0x8F,
  TopicNameInvalid = 0x90,
  PacketIdentifierInUse = 0x91,
  PacketIdentifierNotFound = 0x92,
  ReceiveMaximumExceeded = 0x93,
  TopicAliasInvalid = 0x94,
  PacketTooLarge = 0x95,
  QuotaExceeded = 0x97,
  PayloadFormatInvalid = 0x99,
  RetainNotSupported = 0x9A,
  QosNotSupported = 0x9B,
  UseAnotherServer = 0x9C,
  SharedSubscriptionsNotSupported = 0x9E,
  ConnectionRateExceeded = 0x9F,  // 3.1.1: server unavailable (3)
  SubscriptionIdentifiersNotSupported = 0xA1,
  WildcardSubscriptionsNotSupported = 0xA2,
};
const char* reason_name(Reason reason);
// The MQTT 3.1.1 CONNACK return code closest to a refusal reason.
uint8_t connack_code_v311(Reason reason);

// One packet cut from the byte stream: its fixed header's type and flags,
// and the variable header plus payload (`body`).
struct Packet {
  PacketType type{};
  uint8_t flags = 0;                 // the fixed header's low four bits
  std::span<const uint8_t> body;
  size_t size = 0;                   // fixed header + body
};

// MQTT 5 properties (section 2.2.2) the broker reads. `raw` is the whole
// property block as received (user properties are forwarded from it).
struct Properties {
  std::span<const uint8_t> raw;
  uint32_t session_expiry = 0;       // 0x11
  bool has_session_expiry = false;
  uint16_t receive_maximum = 65535;  // 0x21
  uint32_t maximum_packet_size = 0;  // 0x27; 0 = no limit stated
  uint16_t topic_alias_maximum = 0;  // 0x22
  uint16_t topic_alias = 0;          // 0x23
  uint32_t message_expiry = 0;       // 0x02
  bool has_message_expiry = false;
  uint32_t will_delay = 0;           // 0x18
  uint8_t payload_format = 0;        // 0x01
  uint32_t subscription_id = 0;      // 0x0B
  uint32_t user_properties = 0;      // 0x26, how many
  std::string_view auth_method;      // 0x15
  std::string_view response_topic;   // 0x08
  std::span<const uint8_t> correlation_data;  // 0x09
};

struct Will {
  std::string_view topic;
  std::span<const uint8_t> payload;
  uint8_t qos = 0;
  bool retain = false;
  Properties properties;
};

struct Connect {
  Version version = Version::V311;
  bool clean_start = false;          // Clean Session in 3.1.1
  uint16_t keepalive_s = 0;
  std::string_view client_id;
  bool has_will = false;
  Will will;
  bool has_username = false;
  std::string_view username;
  bool has_password = false;
  std::span<const uint8_t> password;
  Properties properties;
};

struct Publish {
  bool dup = false;
  uint8_t qos = 0;
  bool retain = false;
  std::string_view topic;
  uint16_t packet_id = 0;            // QoS 1 and 2 only
  Properties properties;
  std::span<const uint8_t> payload;
};

// PUBACK, PUBREC, PUBREL, PUBCOMP.
struct PubResponse {
  PacketType type = PacketType::Puback;
  uint16_t packet_id = 0;
  Reason reason = Reason::Success;
};

struct TopicFilter {
  std::string_view filter;
  uint8_t qos = 0;
  bool no_local = false;             // MQTT 5 subscription options
  bool retain_as_published = false;
  uint8_t retain_handling = 0;
};

struct Subscribe {
  uint16_t packet_id = 0;
  Properties properties;
  std::vector<TopicFilter> filters;  // SUBSCRIBE and UNSUBSCRIBE (qos unused there)
};

struct Disconnect {
  Reason reason = Reason::Success;
  Properties properties;
};

}  // namespace tw::mqtt
