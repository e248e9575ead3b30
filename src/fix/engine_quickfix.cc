// The QuickFIX side of tw::fix::Engine. Compiled as C++14 (see engine.h):
// include nothing of Tickwire here but engine.h.
#include <map>
#include <mutex>

#include "fix/engine.h"
#include "fix/log_store.h"
#include "fix/quickfix_includes.h"

namespace tw {
namespace fix {
namespace {

// One store per session, chosen by its spec: our LogStore or QuickFIX's
// FileStore (sequence numbers and sent messages on disk, so a restart resumes
// and can resend), or its MemoryStore.
class PerSessionStoreFactory : public FIX::MessageStoreFactory {
 public:
  void add(const FIX::SessionID& id, const SessionSpec& spec) { specs_[id.toString()] = spec; }
  FIX::MessageStore* create(const FIX::SessionID& id) override {
    auto it = specs_.find(id.toString());
    if (it == specs_.end() || it->second.store_dir.empty()) return new FIX::MemoryStore();
    if (it->second.store_kind == StoreKind::File) return new FIX::FileStore(it->second.store_dir, id);
    if (!log_store_exists(it->second.store_dir, id) && file_store_exists(it->second.store_dir, id))
      // A store_dir of a gateway from before the LogStore: starting a fresh
      // log would start the session at sequence number 1 unannounced.
      throw FIX::ConfigError("session " + id.toString() + ": " + it->second.store_dir +
                             " holds a QuickFIX FileStore and no LogStore; set store = \"file\" to keep it");
    return new LogStore(log_store_path(it->second.store_dir, id), &flusher_);
  }
  void destroy(FIX::MessageStore* store) override { delete store; }

 private:
  std::map<std::string, SessionSpec> specs_;
  LogStoreFlusher flusher_{2};
};

FIX::Dictionary settings_of(const SessionSpec& s) {
  FIX::Dictionary d;
  d.setString(FIX::CONNECTION_TYPE, s.role == Role::Acceptor ? "acceptor" : "initiator");
  // Start == end: the session is always up (QuickFIX still starts a new
  // sequence at this time each day when the store's creation day is over).
  d.setString(FIX::START_TIME, "00:00:00");
  d.setString(FIX::END_TIME, "00:00:00");
  // No data dictionary: bodies are forwarded field by field, unvalidated
  // beyond what the router needs (docs/fix.md, "Limits").
  d.setBool(FIX::USE_DATA_DICTIONARY, false);
  d.setInt(FIX::HEARTBTINT, s.heartbeat_s);
  d.setBool(FIX::RESET_ON_LOGON, s.reset_on_logon);
  // Without a store, sent messages are not kept either (QuickFIX would keep
  // every one in memory for the process's life): a resend request is
  // answered with a gap fill, as the seed's PersistMessages=N.
  d.setBool(FIX::PERSIST_MESSAGES, !s.store_dir.empty());
  d.setBool(FIX::SOCKET_NODELAY, true);
  d.setBool(FIX::SOCKET_REUSE_ADDRESS, true);
  d.setBool(FIX::CHECK_LATENCY, false);
  if (s.role == Role::Acceptor) {
    d.setInt(FIX::SOCKET_ACCEPT_PORT, s.port);
  } else {
    d.setString(FIX::SOCKET_CONNECT_HOST, s.host.empty() ? "127.0.0.1" : s.host);
    d.setInt(FIX::SOCKET_CONNECT_PORT, s.port);
    d.setInt(FIX::RECONNECT_INTERVAL, s.reconnect_s);
  }
  return d;
}

FixMessage body_of(const FIX::Message& m) {
  FixMessage out;
  FIX::MsgType type;
  m.getHeader().getField(type);
  out.msg_type = type.getValue();
  out.fields.reserve(16);
  for (FIX::FieldMap::const_iterator it = m.begin(); it != m.end(); ++it)
    out.fields.emplace_back(it->getTag(), it->getString());
  return out;
}

void build(const FixMessage& in, FIX::Message& out) {
  out.getHeader().setField(FIX::MsgType(in.msg_type));
  if (in.poss_resend) out.getHeader().setField(FIX::PossResend(true));
  for (const auto& f : in.fields) out.setField(f.first, f.second);
}

class QuickFixEngine : public Engine, public FIX::Application {
 public:
  QuickFixEngine(const std::vector<SessionSpec>& sessions, EngineEvents& events) : events_(events) {
    for (const auto& s : sessions) {
      FIX::SessionID id(s.begin_string, s.sender_comp_id, s.target_comp_id);
      by_name_.insert(std::make_pair(s.name, id));
      names_.insert(std::make_pair(id.toString(), s.name));
      stores_.add(id, s);
      // One SessionSettings per side: QuickFIX's SocketAcceptor checks every
      // session it is given for SocketAcceptPort, initiators included.
      if (s.role == Role::Acceptor)
        acceptor_settings_.set(id, settings_of(s));
      else
        initiator_settings_.set(id, settings_of(s));
    }
  }
  ~QuickFixEngine() override { stop(); }

  bool start(std::string* error) override {
    try {
      if (!acceptor_settings_.getSessions().empty()) {
        acceptor_.reset(new FIX::SocketAcceptor(*this, stores_, acceptor_settings_));
        acceptor_->start();
      }
      if (!initiator_settings_.getSessions().empty()) {
        initiator_.reset(new FIX::SocketInitiator(*this, stores_, initiator_settings_));
        initiator_->start();
      }
      return true;
    } catch (const FIX::Exception& e) {
      if (error) *error = e.what();
      return false;
    }
  }

  void stop() override {
    if (initiator_) initiator_->stop();
    if (acceptor_) acceptor_->stop();
    initiator_.reset();
    acceptor_.reset();
  }

  bool send(const std::string& session, const FixMessage& message) override {
    auto it = by_name_.find(session);
    if (it == by_name_.end()) return false;
    FIX::Message m;
    build(message, m);
    try {
      return FIX::Session::sendToTarget(m, it->second);
    } catch (const FIX::SessionNotFound&) {
      return false;
    }
  }

  bool logged_on(const std::string& session) const override {
    FIX::Session* s = lookup(session);
    return s != nullptr && s->isLoggedOn();
  }

  std::vector<SessionStatus> status() const override {
    std::vector<SessionStatus> out;
    for (const auto& entry : by_name_) {
      SessionStatus st;
      st.name = entry.first;
      if (FIX::Session* s = FIX::Session::lookupSession(entry.second)) {
        st.logged_on = s->isLoggedOn();
        st.next_sender_seq = s->getExpectedSenderNum();
        st.next_target_seq = s->getExpectedTargetNum();
      }
      out.push_back(st);
    }
    return out;
  }

  // FIX::Application
  void onCreate(const FIX::SessionID&) override {}
  void onLogon(const FIX::SessionID& id) override { events_.on_logon(name_of(id)); }
  void onLogout(const FIX::SessionID& id) override { events_.on_logout(name_of(id)); }
  void toAdmin(FIX::Message&, const FIX::SessionID&) override {}
  void toApp(FIX::Message&, const FIX::SessionID&) throw(FIX::DoNotSend) override {}
  void fromAdmin(const FIX::Message&, const FIX::SessionID&) throw(FIX::FieldNotFound, FIX::IncorrectDataFormat,
                                                                   FIX::IncorrectTagValue, FIX::RejectLogon) override {}
  void fromApp(const FIX::Message& m, const FIX::SessionID& id) throw(FIX::FieldNotFound, FIX::IncorrectDataFormat,
                                                                      FIX::IncorrectTagValue,
                                                                      FIX::UnsupportedMessageType) override {
    FIX::PossDupFlag poss_dup(false);
    m.getHeader().getFieldIfSet(poss_dup);
    Verdict verdict = events_.on_message(name_of(id), body_of(m), poss_dup.getValue());
    if (verdict == kUnsupportedType) throw FIX::UnsupportedMessageType();
    if (verdict > 0) throw FIX::FieldNotFound(verdict);
  }

 private:
  const std::string& name_of(const FIX::SessionID& id) const {
    static const std::string unknown = "?";
    auto it = names_.find(id.toString());
    return it == names_.end() ? unknown : it->second;
  }
  FIX::Session* lookup(const std::string& session) const {
    auto it = by_name_.find(session);
    return it == by_name_.end() ? nullptr : FIX::Session::lookupSession(it->second);
  }

  EngineEvents& events_;
  FIX::SessionSettings acceptor_settings_;
  FIX::SessionSettings initiator_settings_;
  PerSessionStoreFactory stores_;
  std::map<std::string, FIX::SessionID> by_name_;
  std::map<std::string, std::string> names_;  // SessionID::toString() -> name
  std::unique_ptr<FIX::SocketAcceptor> acceptor_;
  std::unique_ptr<FIX::SocketInitiator> initiator_;
};

}  // namespace

std::unique_ptr<Engine> make_engine(const std::vector<SessionSpec>& sessions, EngineEvents& events) {
  return std::unique_ptr<Engine>(new QuickFixEngine(sessions, events));
}

}  // namespace fix
}  // namespace tw
