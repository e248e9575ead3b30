// Entitlements: what one user may do, decided from its rules (docs/security.md).
// The public face of src/auth for sessions of any protocol: a session holds
// the Grants of its user (null when authentication is off) and asks them when
// a topic is registered, a subscription made, a service advertised, and when
// a wildcard subscription attaches to a channel; never per message.
//
// A rule allows or denies permissions on topic patterns (src/topic syntax).
// Deny wins over allow. A Grants object is immutable: a reload builds new
// ones, so any thread may read them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "topic/index.h"
#include "tickwire/wire/protocol.h"

namespace tw::auth {

enum Permission : uint8_t {
  kPublish = 1,
  kSubscribe = 2,           // real time (and any delay)
  kSubscribeDelayed = 4,    // only with a delay of at least the rule's delay_ms
  kProvide = 8,             // advertise a service; publish into its topics
  kConsume = 16,            // BIND to a durable queue: the rule's patterns name queues (docs/guaranteed.md)
};

struct Rule {
  bool allow = true;
  uint8_t permissions = 0;  // Permission bits
  uint32_t delay_ms = 0;    // kSubscribeDelayed: the forced minimum delay
  std::vector<std::string> patterns;
};

// The answer to a SUBSCRIBE: allowed (with the delay the subscription must
// take, at least what was asked) or refused with a code and a reason.
struct SubscribeVerdict {
  wire::Code code = wire::Code::Ok;
  const char* detail = "";
  uint32_t delay_ms = 0;
  bool ok() const { return code == wire::Code::Ok; }
};

// Patterns every publisher needs the provide permission for (the topics of
// services someone is entitled to provide), shared by all Grants of a policy.
using ServiceSpace = std::vector<std::string>;

class Grants {
 public:
  Grants(std::string user, bool admin, const std::vector<const Rule*>& rules,
         std::shared_ptr<const ServiceSpace> services, uint32_t max_channels = 0);

  const std::string& user() const { return user_; }
  bool admin() const { return admin_; }
  // New channels this user's open connections may have created together
  // (users.NAME.max_channels); 0: the broker's limits.max_channels_per_user.
  uint32_t max_channels() const { return max_channels_; }

  // SUBSCRIBE of `pattern` asking for `delay_ms` (0 = live). An exact topic
  // must be receivable; a wildcard must overlap something receivable and not
  // lie wholly under a deny. Without a real-time grant the delay is raised
  // to the delayed-only rules' delay.
  SubscribeVerdict subscribe(std::string_view pattern, uint32_t delay_ms) const;
  // Whether the channel `topic` may be delivered with `delay_ms`.
  bool receives(std::string_view topic, uint32_t delay_ms) const;
  // REGISTER of `topic`: Ok, NotAuthorized, or NotProvider (a service's topic).
  wire::Code publish(std::string_view topic) const;
  // PROVIDE of `service` with `pattern` ("" = all of its topics).
  wire::Code provide(std::string_view service, std::string_view pattern) const;
  // BIND to the queue `queue` (a valid one-level name, matched like a topic).
  bool consumes(std::string_view queue) const;
  // A durable subscription of `pattern` (its messages are stored and
  // delivered unfiltered): every topic it matches must be receivable in real
  // time, so a real-time subscribe rule covers it and no subscribe deny overlaps it.
  bool subscribes_wholly(std::string_view pattern) const;

 private:
  struct Entry {
    bool allow = true;
    uint8_t permissions = 0;
    uint32_t delay_ms = 0;
    bool operator==(const Entry&) const = default;
  };
  // OR of the permissions allowed / denied on a literal topic; the smallest
  // delayed-only delay allowed.
  struct Match {
    uint8_t allowed = 0;
    uint8_t denied = 0;
    uint32_t delayed_ms = UINT32_MAX;
  };
  Match match(std::string_view topic) const;
  // Topics whose first level starts with '$' ($SYS) are matched only by rules
  // whose patterns do: a '>' or '*' first level never reaches them, as MQTT's
  // '#' and '+' do not (and as mosquitto's ACLs do not).
  const topic::PatternIndex<Entry>& index_of(std::string_view topic) const {
    return topic.starts_with('$') ? dollar_index_ : index_;
  }

  std::string user_;
  bool admin_ = false;
  uint32_t max_channels_ = 0;
  topic::PatternIndex<Entry> index_;
  topic::PatternIndex<Entry> dollar_index_;  // rules on '$' topics
  std::shared_ptr<const ServiceSpace> services_;
};

}  // namespace tw::auth
