// tickwire-fix-load: a FIX client on QuickFIX that sends NewOrderSingles at a
// fixed rate and counts the ExecutionReports that come back (the gateway's
// benchmark, bench/fix/; docs/fix.md, "Simulator and load client").
//
//   tickwire-fix-load --connect HOST:PORT --session FIX.4.4:CLIENT:GW
//                     --rate R --seconds S [--symbol FAST] [--ex-destination D]
//                     [--reports-per-order N] [--drain-s S] [--store-dir DIR [--store-kind log|file]]
//
// Sends R orders a second for S seconds on an absolute schedule (a late
// order is sent at once, not skipped), each with tag 5979 = its send time on
// the steady clock (the simulator measures order-to-exchange latency with
// it), then waits up to --drain-s for N reports per order (FAST: 1).
// Prints "sent=.. reports=.. expected=.. lost=.. seconds=.." and exits 0
// when none is missing.
#include <atomic>
#include <thread>

#include "sim_common.h"

namespace {

using twsim::die;

class LoadClient : public FIX::Application {
 public:
  std::atomic<bool> logged_on{false};
  std::atomic<uint64_t> reports{0};

  void onCreate(const FIX::SessionID&) override {}
  void onLogon(const FIX::SessionID&) override { logged_on = true; }
  void onLogout(const FIX::SessionID&) override { logged_on = false; }
  void toAdmin(FIX::Message&, const FIX::SessionID&) override {}
  void toApp(FIX::Message&, const FIX::SessionID&) throw(FIX::DoNotSend) override {}
  void fromAdmin(const FIX::Message&, const FIX::SessionID&) throw(FIX::FieldNotFound, FIX::IncorrectDataFormat,
                                                                   FIX::IncorrectTagValue, FIX::RejectLogon) override {}
  void fromApp(const FIX::Message& m, const FIX::SessionID&) throw(FIX::FieldNotFound, FIX::IncorrectDataFormat,
                                                                   FIX::IncorrectTagValue,
                                                                   FIX::UnsupportedMessageType) override {
    if (m.getHeader().getField(FIX::FIELD::MsgType) == "8") reports.fetch_add(1, std::memory_order_relaxed);
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::string host = "127.0.0.1", symbol = "FAST", ex_destination, store_dir, store_kind = "log";
  int port = 0, per_order = 1, drain_s = 10;
  double rate = 1000, seconds = 10;
  FIX::SessionID session;
  bool have_session = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) die("tickwire-fix-load: " + arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--connect") {
      size_t colon = value.rfind(':');
      if (colon == std::string::npos) die("tickwire-fix-load: --connect HOST:PORT");
      host = value.substr(0, colon);
      port = std::atoi(value.c_str() + colon + 1);
    } else if (arg == "--session") {
      have_session = twsim::parse_session(value, session);
    } else if (arg == "--rate") {
      rate = std::atof(value.c_str());
    } else if (arg == "--seconds") {
      seconds = std::atof(value.c_str());
    } else if (arg == "--symbol") {
      symbol = value;
    } else if (arg == "--ex-destination") {
      ex_destination = value;
    } else if (arg == "--reports-per-order") {
      per_order = std::atoi(value.c_str());
    } else if (arg == "--drain-s") {
      drain_s = std::atoi(value.c_str());
    } else if (arg == "--store-dir") {
      store_dir = value;
    } else if (arg == "--store-kind" && (value == "log" || value == "file")) {
      store_kind = value;
    } else {
      die("tickwire-fix-load: bad argument " + arg + " (see the header of load_client.cc)");
    }
  }
  if (port <= 0 || !have_session || rate <= 0) die("usage: tickwire-fix-load --connect HOST:PORT --session FIX.4.4:C:GW ...");

  FIX::SessionSettings settings;
  FIX::Dictionary d = twsim::base_settings(false, store_dir.empty());
  d.setString(FIX::SOCKET_CONNECT_HOST, host);
  d.setInt(FIX::SOCKET_CONNECT_PORT, port);
  settings.set(session, d);
  LoadClient app;
  std::unique_ptr<FIX::MessageStoreFactory> stores_owner = twsim::store_factory(store_dir, store_kind);
  FIX::MessageStoreFactory& stores = *stores_owner;
  FIX::SocketInitiator initiator(app, stores, settings);
  initiator.start();
  for (int i = 0; i < 1000 && !app.logged_on; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!app.logged_on) die("tickwire-fix-load: no logon within 10 s");

  const uint64_t total = uint64_t(rate * seconds);
  const int64_t start = twsim::steady_ns();
  const double interval_ns = 1e9 / rate;
  uint64_t sent = 0;
  FIX::Message order;
  order.getHeader().setField(FIX::MsgType("D"));
  order.setField(FIX::FIELD::Symbol, symbol);
  order.setField(FIX::FIELD::Side, "1");
  order.setField(FIX::FIELD::OrderQty, "100");
  order.setField(FIX::FIELD::OrdType, "2");
  order.setField(FIX::FIELD::Price, "10.5");
  order.setField(FIX::FIELD::HandlInst, "1");
  if (!ex_destination.empty()) order.setField(FIX::FIELD::ExDestination, ex_destination);
  const std::string id_prefix = "L" + std::to_string(start) + "-";
  while (sent < total) {
    const int64_t due = start + int64_t(sent * interval_ns);
    int64_t now = twsim::steady_ns();
    if (due > now) std::this_thread::sleep_for(std::chrono::nanoseconds(due - now));
    order.setField(FIX::FIELD::ClOrdID, id_prefix + std::to_string(sent));
    order.setField(FIX::TransactTime());
    order.setField(twsim::kSentNsTag, std::to_string(twsim::steady_ns()));
    FIX::Session::sendToTarget(order, session);
    ++sent;
  }
  const double elapsed = (twsim::steady_ns() - start) / 1e9;
  const uint64_t expected = sent * uint64_t(per_order);
  for (int i = 0; i < drain_s * 100 && app.reports < expected; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const uint64_t got = app.reports;
  std::printf("sent=%llu reports=%llu expected=%llu lost=%lld seconds=%.1f\n", (unsigned long long)sent,
              (unsigned long long)got, (unsigned long long)expected, (long long)expected - (long long)got, elapsed);
  initiator.stop();
  return got == expected ? 0 : 1;
}
