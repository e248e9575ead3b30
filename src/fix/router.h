// tw::fix::Router: what the gateway does with each application message.
//
// Client sessions send NewOrderSingle (D), OrderCancelRequest (F) and
// OrderCancelReplaceRequest (G); the router picks the exchange session by the
// configured routes (first match), checks the client's entitlement and that
// the exchange is logged on, rewrites ClOrdID (11) and OrigClOrdID (41) to
// "<client>:<ClOrdID>" so that ids of different clients cannot collide at
// an exchange, and forwards. Exchanges send ExecutionReport (8) and
// OrderCancelReject (9); their ids name the client, so they find their way
// back without state, also after a restart. Cancels and replaces go where
// the original order went (remembered while the order is open; after a
// restart, by the routes again). Refusals are answered to the client by the
// gateway itself: an ExecutionReport with OrdStatus 8 for an order, an
// OrderCancelReject for a cancel or replace, with the reason in Text (58).
//
// Every one of these events is also a drop copy (docs/fix.md, "Drop copies").
// Not thread-safe: the gateway serialises calls.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fix/engine.h"
#include "fix/gateway_config.h"

namespace tw::fix {

// FIX tags the router reads or writes.
namespace tag {
inline constexpr int kAvgPx = 6, kClOrdID = 11, kCumQty = 14, kExecID = 17, kExecTransType = 20, kOrderID = 37,
                     kOrderQty = 38, kOrdStatus = 39, kOrigClOrdID = 41, kSide = 54, kSymbol = 55, kText = 58,
                     kTransactTime = 60, kExDestination = 100, kCxlRejReason = 102, kOrdRejReason = 103,
                     kExecType = 150, kLeavesQty = 151, kSecurityExchange = 207, kCxlRejResponseTo = 434;
}

// Why the gateway refused an order (counted by reason in /metrics).
enum class Refusal { UnknownDestination, NotEntitled, ExchangeDown, UnknownOrder };
const char* refusal_name(Refusal r);

struct Outgoing {
  std::string session;
  FixMessage message;
};

// One order event as the client sees it (its own ClOrdIDs).
struct DropCopy {
  std::string client;
  std::string exchange;  // "unrouted" when the gateway refused it before routing
  std::string event;     // new, cancel, replace, exec, cancel_reject, reject
  FixMessage message;
};

struct RouterCounters {
  std::map<std::pair<std::string, std::string>, uint64_t> routed;  // (client, exchange) -> orders, cancels, replaces
  std::map<std::pair<std::string, std::string>, uint64_t> reports;  // (exchange, client) -> 8 and 9 sent back
  std::map<std::string, uint64_t> refused;                          // refusal name -> count
  uint64_t unroutable_reports = 0;  // from an exchange, naming no known client
};

class Router {
 public:
  static constexpr std::string_view kUnrouted = "unrouted";
  using LoggedOn = std::function<bool(const std::string& session)>;

  Router(const GatewayConfig& config, LoggedOn logged_on);

  struct Actions {
    std::vector<Outgoing> send;
    std::vector<DropCopy> copies;
    Verdict verdict = kAccepted;  // engine.h
  };
  // `poss_dup`: the message arrived as a resend (PossDupFlag Y).
  Actions on_message(const std::string& session, const FixMessage& message, bool poss_dup = false);
  const RouterCounters& counters() const { return counters_; }
  size_t open_orders() const { return orders_.size(); }

  // "<client>:<ClOrdID>" and back.
  static std::string exchange_id(std::string_view client, std::string_view cl_ord_id);
  static bool split_exchange_id(std::string_view id, std::string& client, std::string& cl_ord_id);

 private:
  Actions from_client(const GatewaySession& client, const FixMessage& m, bool poss_dup);
  Actions from_exchange(const GatewaySession& exchange, const FixMessage& m, bool poss_dup);
  static const std::string* order_id(const FixMessage& m, std::initializer_list<std::string_view> types, Actions& a);
  // The exchange for a message of `client` by the routes; "" when none matches.
  std::string route(const std::string& client, const FixMessage& m) const;
  void refuse(Actions& a, const GatewaySession& client, const FixMessage& m, const std::string& exchange,
              Refusal why, const std::string& text);
  FixMessage reject_report(const GatewaySession& client, const FixMessage& order, Refusal why,
                           const std::string& text);
  FixMessage cancel_reject(const FixMessage& request, Refusal why, const std::string& text) const;
  static std::string order_key(std::string_view client, std::string_view cl_ord_id);

  const GatewayConfig& config_;
  LoggedOn logged_on_;
  // Open orders: order_key(client, ClOrdID) -> exchange session.
  std::unordered_map<std::string, std::string> orders_;
  RouterCounters counters_;
  uint64_t next_reject_id_ = 1;
  std::string reject_id_prefix_;  // unique per gateway run: ExecIDs are not reused after a restart
};

std::string event_of(std::string_view msg_type);

}  // namespace tw::fix
