// tickwire-fix-exchange: a simulated exchange on QuickFIX, for the gateway's
// tests and benchmarks (docs/fix.md, "Simulator and load client").
//
//   tickwire-fix-exchange --port P --session FIX.4.4:EXCH:GW [--session ...]
//                         [--store-dir DIR [--store-kind log|file]] [--fill-delay-ms N] [--stats-file F]
//
// Acceptor sessions (SenderCompID = the exchange). What it does with a
// NewOrderSingle depends on the symbol's prefix:
//   REJ   ExecutionReport Rejected (OrdStatus 8)
//   REST  New only: the order rests (for cancels and replaces)
//   PART  New, a partial fill of half, then the rest
//   SLOW  New now, the fill --fill-delay-ms later (default 1000), sent even
//         when the session is down then (stored; resent after the next
//         logon); "delayed-fill CLORDID" on stdout once sent
//   FAST  one fill, no New (the benchmark's one report per order)
//   else  New, then a full fill
// Every ExecutionReport carries LastMkt (30) = the simulator's SenderCompID.
// OrderCancelRequest and OrderCancelReplaceRequest act on open orders, else
// OrderCancelReject (unknown order). Prints "ready" once listening. On
// SIGTERM: the order-to-exchange latency of orders that carry tag 5979 (the
// load client's send time), "latency count=N p50_us=.. p99_us=..", on stdout
// and in --stats-file.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "sim_common.h"

namespace {

using twsim::die;

struct Order {
  std::string symbol, side, price, order_id;
  double qty = 0, cum = 0;
};

struct DelayedFill {
  int64_t due_ns;
  FIX::SessionID session;
  std::string cl_ord_id;
};

class Exchange : public FIX::Application {
 public:
  explicit Exchange(int fill_delay_ms) : fill_delay_ns_(int64_t(fill_delay_ms) * 1000000) {
    exec_prefix_ = "SIM-" + std::to_string(std::chrono::system_clock::now().time_since_epoch().count()) + "-";
  }

  void onCreate(const FIX::SessionID&) override {}
  void onLogon(const FIX::SessionID& id) override { std::fprintf(stderr, "exchange: %s logged on\n", id.toString().c_str()); }
  void onLogout(const FIX::SessionID& id) override { std::fprintf(stderr, "exchange: %s logged out\n", id.toString().c_str()); }
  void toAdmin(FIX::Message&, const FIX::SessionID&) override {}
  void toApp(FIX::Message&, const FIX::SessionID&) throw(FIX::DoNotSend) override {}
  void fromAdmin(const FIX::Message& m, const FIX::SessionID& id) throw(FIX::FieldNotFound, FIX::IncorrectDataFormat,
                                                                         FIX::IncorrectTagValue, FIX::RejectLogon) override {
    if (m.getHeader().getField(FIX::FIELD::MsgType) == "2")  // the tests look for it after a restart
      std::fprintf(stderr, "exchange: %s ResendRequest %s..%s\n", id.toString().c_str(),
                   m.getField(FIX::FIELD::BeginSeqNo).c_str(), m.getField(FIX::FIELD::EndSeqNo).c_str());
  }
  void fromApp(const FIX::Message& m, const FIX::SessionID& id) throw(FIX::FieldNotFound, FIX::IncorrectDataFormat,
                                                                      FIX::IncorrectTagValue,
                                                                      FIX::UnsupportedMessageType) override {
    const int64_t now = twsim::steady_ns();
    if (m.isSetField(twsim::kSentNsTag)) {
      std::lock_guard<std::mutex> lock(stats_mutex_);
      latencies_.push_back(now - std::atoll(m.getField(twsim::kSentNsTag).c_str()));
    }
    const std::string type = m.getHeader().getField(FIX::FIELD::MsgType);
    if (type == "D") return new_order(m, id);
    if (type == "F" || type == "G") return cancel_or_replace(m, id, type == "G");
    throw FIX::UnsupportedMessageType();
  }

  // Sends the delayed fills that are due; called by the timer thread.
  void tick() {
    std::vector<DelayedFill> due;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const int64_t now = twsim::steady_ns();
      auto it = std::partition(delayed_.begin(), delayed_.end(), [&](const DelayedFill& d) { return d.due_ns > now; });
      due.assign(it, delayed_.end());
      delayed_.erase(it, delayed_.end());
    }
    for (const auto& d : due) {
      std::lock_guard<std::mutex> lock(mutex_);
      auto o = orders_.find(key(d.session, d.cl_ord_id));
      if (o == orders_.end()) continue;
      send_fill(d.session, d.cl_ord_id, o->second, o->second.qty - o->second.cum);
      orders_.erase(o);
      std::printf("delayed-fill %s\n", d.cl_ord_id.c_str());
      std::fflush(stdout);
    }
  }

  std::string latency_line() {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    std::vector<int64_t> v = latencies_;
    std::sort(v.begin(), v.end());
    auto pct = [&](double p) { return v.empty() ? 0.0 : v[std::min(v.size() - 1, size_t(p * v.size()))] / 1000.0; };
    char buf[160];
    std::snprintf(buf, sizeof buf, "latency count=%zu p50_us=%.1f p99_us=%.1f max_us=%.1f", v.size(), pct(0.5),
                  pct(0.99), v.empty() ? 0.0 : v.back() / 1000.0);
    return buf;
  }

 private:
  static std::string key(const FIX::SessionID& id, const std::string& cl) { return id.toString() + "|" + cl; }
  static bool has_prefix(const std::string& s, const char* p) { return s.compare(0, std::strlen(p), p) == 0; }

  void new_order(const FIX::Message& m, const FIX::SessionID& id) {
    Order o;
    const std::string cl = m.getField(FIX::FIELD::ClOrdID);
    o.symbol = m.isSetField(FIX::FIELD::Symbol) ? m.getField(FIX::FIELD::Symbol) : "";
    o.side = m.isSetField(FIX::FIELD::Side) ? m.getField(FIX::FIELD::Side) : "1";
    o.price = m.isSetField(FIX::FIELD::Price) ? m.getField(FIX::FIELD::Price) : "100";
    o.qty = m.isSetField(FIX::FIELD::OrderQty) ? std::atof(m.getField(FIX::FIELD::OrderQty).c_str()) : 100;
    std::lock_guard<std::mutex> lock(mutex_);
    o.order_id = "O" + std::to_string(++next_order_);
    if (has_prefix(o.symbol, "REJ")) {
      send_report(id, cl, "", o, '8', '8', 0, "simulated reject: symbol " + o.symbol);
    } else if (has_prefix(o.symbol, "FAST")) {
      send_fill(id, cl, o, o.qty);
    } else {
      send_report(id, cl, "", o, '0', '0', 0, "");
      if (has_prefix(o.symbol, "PART")) {
        double half = std::max(1.0, double(int64_t(o.qty / 2)));
        send_fill(id, cl, o, half);
        send_fill(id, cl, o, o.qty - o.cum);
      } else if (has_prefix(o.symbol, "REST")) {
        orders_[key(id, cl)] = o;
      } else if (has_prefix(o.symbol, "SLOW")) {
        orders_[key(id, cl)] = o;
        delayed_.push_back(DelayedFill{twsim::steady_ns() + fill_delay_ns_, id, cl});
      } else {
        send_fill(id, cl, o, o.qty);
      }
    }
  }

  void cancel_or_replace(const FIX::Message& m, const FIX::SessionID& id, bool replace) {
    const std::string cl = m.getField(FIX::FIELD::ClOrdID);
    const std::string orig = m.getField(FIX::FIELD::OrigClOrdID);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = orders_.find(key(id, orig));
    if (it == orders_.end()) {
      FIX::Message r;
      r.getHeader().setField(FIX::MsgType("9"));
      r.setField(FIX::FIELD::OrderID, "NONE");
      r.setField(FIX::FIELD::ClOrdID, cl);
      r.setField(FIX::FIELD::OrigClOrdID, orig);
      r.setField(FIX::FIELD::OrdStatus, "8");
      r.setField(FIX::FIELD::CxlRejResponseTo, replace ? "2" : "1");
      r.setField(FIX::FIELD::CxlRejReason, "1");
      r.setField(FIX::FIELD::Text, "unknown order " + orig);
      FIX::Session::sendToTarget(r, id);
      return;
    }
    Order o = it->second;
    orders_.erase(it);
    if (replace) {
      if (m.isSetField(FIX::FIELD::OrderQty)) o.qty = std::atof(m.getField(FIX::FIELD::OrderQty).c_str());
      if (m.isSetField(FIX::FIELD::Price)) o.price = m.getField(FIX::FIELD::Price);
      orders_[key(id, cl)] = o;
      send_report(id, cl, orig, o, '5', '0', 0, "");
    } else {
      send_report(id, cl, orig, o, '4', '4', 0, "");
    }
  }

  void send_fill(const FIX::SessionID& id, const std::string& cl, Order& o, double qty) {
    o.cum += qty;
    const bool done = o.cum >= o.qty;
    const bool fix42 = id.getBeginString().getValue() == "FIX.4.2";
    // FIX 4.2: ExecType 1 / 2 (partial fill / fill); 4.4: F (trade).
    send_report(id, cl, "", o, fix42 ? (done ? '2' : '1') : 'F', done ? '2' : '1', qty, "");
  }

  void send_report(const FIX::SessionID& id, const std::string& cl, const std::string& orig, const Order& o,
                   char exec_type, char ord_status, double last_qty, const std::string& text) {
    FIX::Message r;
    r.getHeader().setField(FIX::MsgType("8"));
    r.setField(FIX::FIELD::OrderID, o.order_id);
    r.setField(FIX::FIELD::ExecID, exec_prefix_ + std::to_string(++next_exec_));
    if (id.getBeginString().getValue() == "FIX.4.2") r.setField(FIX::FIELD::ExecTransType, "0");
    r.setField(FIX::FIELD::ExecType, std::string(1, exec_type));
    r.setField(FIX::FIELD::OrdStatus, std::string(1, ord_status));
    r.setField(FIX::FIELD::ClOrdID, cl);
    if (!orig.empty()) r.setField(FIX::FIELD::OrigClOrdID, orig);
    r.setField(FIX::FIELD::Symbol, o.symbol);
    r.setField(FIX::FIELD::Side, o.side);
    r.setField(FIX::FIELD::OrderQty, FIX::DoubleConvertor::convert(o.qty));
    r.setField(FIX::FIELD::LeavesQty, FIX::DoubleConvertor::convert(ord_status == '8' || ord_status == '4' ? 0 : o.qty - o.cum));
    r.setField(FIX::FIELD::CumQty, FIX::DoubleConvertor::convert(o.cum));
    r.setField(FIX::FIELD::AvgPx, o.cum > 0 ? o.price : "0");
    if (last_qty > 0) {
      r.setField(FIX::FIELD::LastQty, FIX::DoubleConvertor::convert(last_qty));
      r.setField(FIX::FIELD::LastPx, o.price);
    }
    r.setField(FIX::TransactTime());
    r.setField(FIX::FIELD::LastMkt, id.getSenderCompID().getValue());  // which exchange answered
    if (!text.empty()) r.setField(FIX::FIELD::Text, text);
    FIX::Session::sendToTarget(r, id);
  }

  int64_t fill_delay_ns_;
  std::string exec_prefix_;
  std::mutex mutex_;
  std::map<std::string, Order> orders_;
  std::vector<DelayedFill> delayed_;
  uint64_t next_order_ = 0, next_exec_ = 0;
  std::mutex stats_mutex_;
  std::vector<int64_t> latencies_;
};

}  // namespace

int main(int argc, char** argv) {
  int port = 0, fill_delay_ms = 1000;
  std::string store_dir, store_kind = "log", stats_file;
  std::vector<FIX::SessionID> sessions;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) die("tickwire-fix-exchange: " + arg + " needs a value");
    const std::string value = argv[++i];
    FIX::SessionID id;
    if (arg == "--port") port = std::atoi(value.c_str());
    else if (arg == "--session" && twsim::parse_session(value, id)) sessions.push_back(id);
    else if (arg == "--store-dir") store_dir = value;
    else if (arg == "--store-kind" && (value == "log" || value == "file")) store_kind = value;
    else if (arg == "--fill-delay-ms") fill_delay_ms = std::atoi(value.c_str());
    else if (arg == "--stats-file") stats_file = value;
    else die("tickwire-fix-exchange: bad argument " + arg + " (see the header of exchange_sim.cc)");
  }
  if (port <= 0 || sessions.empty()) die("usage: tickwire-fix-exchange --port P --session FIX.4.4:EXCH:GW ...");
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  FIX::SessionSettings settings;
  for (const auto& id : sessions) {
    FIX::Dictionary d = twsim::base_settings(true, store_dir.empty());
    d.setInt(FIX::SOCKET_ACCEPT_PORT, port);
    settings.set(id, d);
  }
  Exchange exchange(fill_delay_ms);
  std::unique_ptr<FIX::MessageStoreFactory> stores_owner = twsim::store_factory(store_dir, store_kind);
  FIX::MessageStoreFactory& stores = *stores_owner;
  FIX::SocketAcceptor acceptor(exchange, stores, settings);
  try {
    acceptor.start();
  } catch (const FIX::Exception& e) {
    die(std::string("tickwire-fix-exchange: ") + e.what());
  }
  std::atomic<bool> stopping(false);
  std::thread timer([&] {
    while (!stopping) {
      exchange.tick();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  std::printf("ready\n");
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop_signals, &sig);
  stopping = true;
  timer.join();
  acceptor.stop();
  const std::string line = exchange.latency_line();
  std::printf("%s\n", line.c_str());
  if (!stats_file.empty()) std::ofstream(stats_file) << line << "\n";
  return 0;
}
