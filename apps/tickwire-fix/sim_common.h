// Shared by the simulator and the load client (C++14, QuickFIX): session
// settings from the command line, and time stamps.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "fix/log_store.h"
#include "fix/quickfix_includes.h"

namespace twsim {

// Tag of the load client's send time (steady clock ns; one machine, so the
// simulator can subtract it from its own steady clock): user-defined range.
const int kSentNsTag = 5979;

inline int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// "FIX.4.4:SENDER:TARGET" -> SessionID.
inline bool parse_session(const std::string& text, FIX::SessionID& out) {
  size_t a = text.find(':');
  size_t b = a == std::string::npos ? a : text.find(':', a + 1);
  if (b == std::string::npos) return false;
  out = FIX::SessionID(text.substr(0, a), text.substr(a + 1, b - a - 1), text.substr(b + 1));
  return true;
}

// reset_on_logon: no store (sequence numbers start again at each logon, and
// sent messages are not kept for resends).
inline FIX::Dictionary base_settings(bool acceptor, bool reset_on_logon) {
  FIX::Dictionary d;
  d.setString(FIX::CONNECTION_TYPE, acceptor ? "acceptor" : "initiator");
  d.setString(FIX::START_TIME, "00:00:00");
  d.setString(FIX::END_TIME, "00:00:00");
  d.setBool(FIX::USE_DATA_DICTIONARY, false);
  d.setInt(FIX::HEARTBTINT, 30);
  d.setInt(FIX::RECONNECT_INTERVAL, 1);
  d.setBool(FIX::RESET_ON_LOGON, reset_on_logon);
  d.setBool(FIX::PERSIST_MESSAGES, !reset_on_logon);
  d.setBool(FIX::SOCKET_NODELAY, true);
  d.setBool(FIX::SOCKET_REUSE_ADDRESS, true);
  d.setBool(FIX::CHECK_LATENCY, false);
  return d;
}

// --store-dir DIR [--store-kind log|file]: no dir, a MemoryStore; else our
// LogStore (the default, as the gateway's) or QuickFIX's FileStore.
inline std::unique_ptr<FIX::MessageStoreFactory> store_factory(const std::string& dir, const std::string& kind) {
  if (dir.empty()) return std::unique_ptr<FIX::MessageStoreFactory>(new FIX::MemoryStoreFactory());
  if (kind == "file") return std::unique_ptr<FIX::MessageStoreFactory>(new FIX::FileStoreFactory(dir));
  return std::unique_ptr<FIX::MessageStoreFactory>(new tw::fix::LogStoreFactory(dir));
}

[[noreturn]] inline void die(const std::string& why) {
  std::fprintf(stderr, "%s\n", why.c_str());
  std::exit(2);
}

}  // namespace twsim
