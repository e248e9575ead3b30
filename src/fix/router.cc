#include "fix/router.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <algorithm>

namespace tw::fix {
namespace {

bool equals(const FixMessage& m, int t, const std::string& want) {
  if (want.empty()) return true;
  const std::string* v = m.get(t);
  return v != nullptr && *v == want;
}

// UTCTimestamp, millisecond precision (valid in FIX 4.2 and 4.4).
std::string utc_now() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d%02d%02d-%02d:%02d:%02d.%03d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  return buf;
}

void copy_if_set(const FixMessage& from, FixMessage& to, int t) {
  if (const std::string* v = from.get(t)) to.set(t, *v);
}

// OrdStatus values after which an order id is no longer used.
bool terminal(const std::string* ord_status) {
  if (ord_status == nullptr || ord_status->size() != 1) return false;
  switch ((*ord_status)[0]) {
    case '2':  // filled
    case '3':  // done for day
    case '4':  // canceled
    case '8':  // rejected
    case 'C':  // expired
      return true;
    default:
      return false;
  }
}

}  // namespace

const char* refusal_name(Refusal r) {
  switch (r) {
    case Refusal::UnknownDestination: return "unknown_destination";
    case Refusal::NotEntitled: return "not_entitled";
    case Refusal::ExchangeDown: return "exchange_down";
    case Refusal::UnknownOrder: return "unknown_order";
  }
  return "?";
}

std::string event_of(std::string_view msg_type) {
  if (msg_type == "D") return "new";
  if (msg_type == "F") return "cancel";
  if (msg_type == "G") return "replace";
  if (msg_type == "8") return "exec";
  if (msg_type == "9") return "cancel_reject";
  return "other";
}

Router::Router(const GatewayConfig& config, LoggedOn logged_on) : config_(config), logged_on_(std::move(logged_on)) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch());
  reject_id_prefix_ = "TWFIX-" + std::to_string(ms.count()) + "-";
}

std::string Router::exchange_id(std::string_view client, std::string_view cl_ord_id) {
  std::string id;
  id.reserve(client.size() + 1 + cl_ord_id.size());
  id.append(client).append(":").append(cl_ord_id);
  return id;
}

bool Router::split_exchange_id(std::string_view id, std::string& client, std::string& cl_ord_id) {
  size_t colon = id.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  client.assign(id.substr(0, colon));
  cl_ord_id.assign(id.substr(colon + 1));
  return true;
}

std::string Router::order_key(std::string_view client, std::string_view cl_ord_id) {
  return exchange_id(client, cl_ord_id);
}

Router::Actions Router::on_message(const std::string& session, const FixMessage& message, bool poss_dup) {
  const GatewaySession* s = config_.session(session);
  if (s == nullptr) return Actions{.verdict = kUnsupportedType};
  return s->is_client() ? from_client(*s, message, poss_dup) : from_exchange(*s, message, poss_dup);
}

std::string Router::route(const std::string& client, const FixMessage& m) const {
  for (const Route& r : config_.routes) {
    if (!r.client.empty() && r.client != client) continue;
    if (equals(m, tag::kExDestination, r.ex_destination) && equals(m, tag::kSymbol, r.symbol) &&
        equals(m, tag::kSecurityExchange, r.security_exchange))
      return r.exchange;
  }
  return {};
}

// Both directions carry orders by ClOrdID: its value when the message is of one of `types`, else null with
// the verdict that rejects the message in `a`.
const std::string* Router::order_id(const FixMessage& m, std::initializer_list<std::string_view> types, Actions& a) {
  if (std::find(types.begin(), types.end(), m.msg_type) == types.end()) {
    a.verdict = kUnsupportedType;
    return nullptr;
  }
  const std::string* id = m.get(tag::kClOrdID);
  if (id == nullptr) a.verdict = tag::kClOrdID;
  return id;
}

Router::Actions Router::from_client(const GatewaySession& client, const FixMessage& m, bool poss_dup) {
  Actions a;
  const std::string& type = m.msg_type;
  const std::string* id = order_id(m, {"D", "F", "G"}, a);
  if (id == nullptr) return a;
  const std::string* orig = nullptr;
  std::string exchange;
  if (type == "D") {
    exchange = route(client.spec.name, m);
    if (exchange.empty()) {
      refuse(a, client, m, std::string(kUnrouted), Refusal::UnknownDestination,
             "unknown destination: no route for ExDestination=" +
                 (m.get(tag::kExDestination) ? *m.get(tag::kExDestination) : std::string("(none)")) +
                 " Symbol=" + (m.get(tag::kSymbol) ? *m.get(tag::kSymbol) : std::string("(none)")));
      return a;
    }
  } else {
    orig = m.get(tag::kOrigClOrdID);
    if (orig == nullptr) {
      a.verdict = tag::kOrigClOrdID;
      return a;
    }
    auto known = orders_.find(order_key(client.spec.name, *orig));
    exchange = known != orders_.end() ? known->second : route(client.spec.name, m);
    if (exchange.empty()) {
      refuse(a, client, m, std::string(kUnrouted), Refusal::UnknownOrder, "unknown order: OrigClOrdID=" + *orig);
      return a;
    }
  }
  const auto& allowed = client.exchanges;
  if (allowed && std::find(allowed->begin(), allowed->end(), exchange) == allowed->end()) {
    refuse(a, client, m, exchange, Refusal::NotEntitled,
           "not entitled: session " + client.spec.name + " may not route to " + exchange);
    return a;
  }
  if (!logged_on_(exchange)) {
    refuse(a, client, m, exchange, Refusal::ExchangeDown, "exchange session down: " + exchange + " is not logged on");
    return a;
  }
  FixMessage out = m;
  out.set(tag::kClOrdID, exchange_id(client.spec.name, *id));
  if (orig != nullptr) out.set(tag::kOrigClOrdID, exchange_id(client.spec.name, *orig));
  // The client resent it (after a gap: e.g. our store had not yet written its
  // sequence number at a crash): it may have reached the exchange already.
  out.poss_resend = poss_dup;
  orders_[order_key(client.spec.name, *id)] = exchange;
  ++counters_.routed[{client.spec.name, exchange}];
  a.copies.push_back(DropCopy{client.spec.name, exchange, event_of(type), m});
  a.send.push_back(Outgoing{exchange, std::move(out)});
  return a;
}

Router::Actions Router::from_exchange(const GatewaySession& exchange, const FixMessage& m, bool poss_dup) {
  Actions a;
  const std::string* id = order_id(m, {"8", "9"}, a);
  if (id == nullptr) return a;
  std::string client, cl_ord_id;
  const GatewaySession* c = nullptr;
  if (split_exchange_id(*id, client, cl_ord_id)) c = config_.session(client);
  if (c == nullptr || !c->is_client()) {
    ++counters_.unroutable_reports;
    return a;  // accepted at the FIX level; nobody to forward it to
  }
  FixMessage out = m;
  out.set(tag::kClOrdID, cl_ord_id);
  // A resent report may have been forwarded once already: a gateway killed
  // after forwarding it but before QuickFIX stored its sequence number gets
  // it again after the restart. The client tells by its ExecID.
  out.poss_resend = poss_dup;
  std::string orig_client, orig_id;
  if (const std::string* orig = m.get(tag::kOrigClOrdID); orig && split_exchange_id(*orig, orig_client, orig_id))
    out.set(tag::kOrigClOrdID, orig_id);
  if (m.msg_type == "8") {
    const std::string* status = m.get(tag::kOrdStatus);
    if (terminal(status)) orders_.erase(order_key(client, cl_ord_id));
    // A cancel or replace that took effect ends the original id.
    const std::string* exec_type = m.get(tag::kExecType);
    if (!orig_id.empty() && exec_type && (*exec_type == "4" || *exec_type == "5"))
      orders_.erase(order_key(client, orig_id));
  }
  ++counters_.reports[{exchange.spec.name, client}];
  a.copies.push_back(DropCopy{client, exchange.spec.name, event_of(m.msg_type), out});
  a.send.push_back(Outgoing{client, std::move(out)});
  return a;
}

void Router::refuse(Actions& a, const GatewaySession& client, const FixMessage& m, const std::string& exchange,
                    Refusal why, const std::string& text) {
  ++counters_.refused[refusal_name(why)];
  FixMessage answer = m.msg_type == "D" ? reject_report(client, m, why, text) : cancel_reject(m, why, text);
  a.copies.push_back(DropCopy{client.spec.name, exchange, event_of(m.msg_type), m});
  a.copies.push_back(DropCopy{client.spec.name, exchange, "reject", answer});
  a.send.push_back(Outgoing{client.spec.name, std::move(answer)});
}

// ExecutionReport, OrdStatus/ExecType 8 (Rejected), in the client's FIX version.
FixMessage Router::reject_report(const GatewaySession& client, const FixMessage& order, Refusal why,
                                 const std::string& text) {
  FixMessage r;
  r.msg_type = "8";
  r.set(tag::kOrderID, "NONE");
  r.set(tag::kExecID, reject_id_prefix_ + std::to_string(next_reject_id_++));
  if (client.spec.begin_string == "FIX.4.2") r.set(tag::kExecTransType, "0");
  r.set(tag::kExecType, "8");
  r.set(tag::kOrdStatus, "8");
  copy_if_set(order, r, tag::kClOrdID);
  copy_if_set(order, r, tag::kSymbol);
  copy_if_set(order, r, tag::kSide);
  copy_if_set(order, r, tag::kOrderQty);
  copy_if_set(order, r, tag::kExDestination);
  r.set(tag::kLeavesQty, "0");
  r.set(tag::kCumQty, "0");
  r.set(tag::kAvgPx, "0");
  r.set(tag::kTransactTime, utc_now());
  // OrdRejReason: 2 = exchange closed; 0 = broker / exchange option otherwise.
  r.set(tag::kOrdRejReason, why == Refusal::ExchangeDown ? "2" : "0");
  r.set(tag::kText, text);
  return r;
}

FixMessage Router::cancel_reject(const FixMessage& request, Refusal why, const std::string& text) const {
  FixMessage r;
  r.msg_type = "9";
  r.set(tag::kOrderID, "NONE");
  copy_if_set(request, r, tag::kClOrdID);
  copy_if_set(request, r, tag::kOrigClOrdID);
  r.set(tag::kOrdStatus, "8");
  r.set(tag::kCxlRejResponseTo, request.msg_type == "F" ? "1" : "2");
  // CxlRejReason: 1 = unknown order; 2 = broker / exchange option otherwise.
  r.set(tag::kCxlRejReason, why == Refusal::UnknownOrder ? "1" : "2");
  r.set(tag::kText, text);
  return r;
}

}  // namespace tw::fix
