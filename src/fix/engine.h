// tw::fix::Engine: the boundary between QuickFIX and the rest of Tickwire.
//
// QuickFIX 1.15 as Debian builds it does not compile as C++17/20: its
// headers declare dynamic exception specifications (`throw(FieldNotFound)`)
// and the library was built with std::auto_ptr (SmartPtr) in its ABI. Only
// engine_quickfix.cc and the simulator/load-client sources include QuickFIX
// and are compiled as C++14 (src/fix/CMakeLists.txt). This header is the only
// thing both sides share, so it uses C++14 and plain types only: strings,
// vectors, ints. Nothing of QuickFIX leaks through it.
//
// Threading: QuickFIX calls EngineEvents from its own socket threads (one for
// all acceptor sessions, one for all initiator sessions); send() may be
// called from any thread (QuickFIX locks each session).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tw {
namespace fix {

enum class Role { Acceptor, Initiator };

// Where a session with a store_dir keeps it: our LogStore (log_store.h: one
// append-only file, one write per sent message) or QuickFIX's FileStore.
enum class StoreKind { Log, File };

struct SessionSpec {
  std::string name;          // ours: topics, metrics, routes ("client1")
  Role role = Role::Acceptor;
  std::string begin_string;  // "FIX.4.2", "FIX.4.4"
  std::string sender_comp_id;
  std::string target_comp_id;
  std::string host;          // initiator: where to connect
  uint16_t port = 0;         // acceptor: where to listen; initiator: where to connect
  std::string store_dir;     // "" = memory store (sequence numbers lost on restart)
  StoreKind store_kind = StoreKind::Log;
  int heartbeat_s = 30;
  int reconnect_s = 1;
  bool reset_on_logon = false;  // ResetOnLogon: sequence numbers back to 1 at each logon
};

// A FIX application message's body: (tag, value) in the order QuickFIX
// holds them (by tag; no repeating groups, see docs/fix.md).
struct FixMessage {
  std::string msg_type;  // tag 35
  std::vector<std::pair<int, std::string>> fields;
  // Sent with PossResend (97) = Y in the header: the content may have been
  // sent before (under another sequence number), so the receiver checks it
  // against what it has (ExecID) rather than acting on it twice.
  bool poss_resend = false;

  const std::string* get(int tag) const {
    for (const auto& f : fields)
      if (f.first == tag) return &f.second;
    return nullptr;
  }
  void set(int tag, const std::string& value) {
    for (auto& f : fields)
      if (f.first == tag) {
        f.second = value;
        return;
      }
    fields.emplace_back(tag, value);
  }
  void erase(int tag) {
    for (auto it = fields.begin(); it != fields.end(); ++it)
      if (it->first == tag) {
        fields.erase(it);
        return;
      }
  }
};

struct SessionStatus {
  std::string name;
  bool logged_on = false;
  int next_sender_seq = 0;  // the next MsgSeqNum this side sends
  int next_target_seq = 0;  // the next MsgSeqNum this side expects
};

// What the application says about a message it was given: kAccepted,
// kUnsupportedType (QuickFIX answers with a BusinessMessageReject), or a
// positive FIX tag that is required but missing (QuickFIX answers Reject).
using Verdict = int;
const Verdict kAccepted = 0;
const Verdict kUnsupportedType = -1;

class EngineEvents {
 public:
  virtual ~EngineEvents() {}
  virtual void on_logon(const std::string& session) = 0;
  virtual void on_logout(const std::string& session) = 0;
  // An application message (not session-level) received on `session`.
  // `poss_dup`: PossDupFlag (43) was Y (a resent message).
  virtual Verdict on_message(const std::string& session, const FixMessage& message, bool poss_dup) = 0;
};

class Engine {
 public:
  virtual ~Engine() {}
  // Starts the acceptors and initiators; false with the reason in *error
  // (a QuickFIX ConfigError or RuntimeError: bad settings, a busy port).
  virtual bool start(std::string* error) = 0;
  virtual void stop() = 0;
  // Sends an application message on a session by name. False when the session
  // is unknown. A session that is not logged on stores it (sequence number
  // taken) and sends it after the next logon, as QuickFIX does; check
  // logged_on() first where that is not wanted.
  virtual bool send(const std::string& session, const FixMessage& message) = 0;
  virtual bool logged_on(const std::string& session) const = 0;
  virtual std::vector<SessionStatus> status() const = 0;
};

std::unique_ptr<Engine> make_engine(const std::vector<SessionSpec>& sessions, EngineEvents& events);

}  // namespace fix
}  // namespace tw
