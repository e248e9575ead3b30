// nats: libnats. libnats delivers subscription messages on its own threads;
// they only append the message to inbox_ (under a mutex), signal an eventfd
// when the inbox stops being empty, and poll() hands them to the handler on
// the owning thread, so the handler needs no locking and any number of
// subscriptions (and, through wait_fd(), connections) share one wait. Publishes are buffered by
// libnats and written by its flusher thread. The library is opened at run
// time (perf/peer_library.h).
#include <nats/nats.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "perf/peer_library.h"
#include "perf/transport.h"

namespace tw::perf {

namespace {

constexpr int64_t kConnectTimeoutMs = 5000;
// Room for bursts before libnats declares us a slow consumer and drops.
constexpr int kPendingMsgLimit = 4 << 20;
constexpr int kPendingBytesLimit = 1 << 30;

// The functions of libnats this transport calls.
struct Nats {
  PeerLibrary library{TW_NATS_SONAME, "libnats3.4"};
  TW_PEER_FUNCTION(natsOptions_Create);
  TW_PEER_FUNCTION(natsOptions_SetURL);
  TW_PEER_FUNCTION(natsOptions_SetName);
  TW_PEER_FUNCTION(natsOptions_SetAllowReconnect);
  TW_PEER_FUNCTION(natsOptions_SetTimeout);
  TW_PEER_FUNCTION(natsOptions_Destroy);
  TW_PEER_FUNCTION(natsConnection_Connect);
  TW_PEER_FUNCTION(natsConnection_Publish);
  TW_PEER_FUNCTION(natsConnection_Subscribe);
  TW_PEER_FUNCTION(natsConnection_FlushTimeout);
  TW_PEER_FUNCTION(natsConnection_IsClosed);
  TW_PEER_FUNCTION(natsConnection_Destroy);
  TW_PEER_FUNCTION(natsSubscription_SetPendingLimits);
  TW_PEER_FUNCTION(natsSubscription_Unsubscribe);
  TW_PEER_FUNCTION(natsSubscription_Destroy);
  TW_PEER_FUNCTION(natsMsg_GetSubject);
  TW_PEER_FUNCTION(natsMsg_GetData);
  TW_PEER_FUNCTION(natsMsg_GetDataLength);
  TW_PEER_FUNCTION(natsMsg_Destroy);
  TW_PEER_FUNCTION(natsStatus_GetText);
};

// Opened once, on first use; kept for the process's life.
const Nats& nats_library() {
  static const Nats* lib = new Nats;
  return *lib;
}

Error nats_error(const Nats& lib, const std::string& what, natsStatus s) {
  return Error{"nats: " + what + ": " + lib.natsStatus_GetText(s)};
}

class NatsTransport final : public Transport {
 public:
  explicit NatsTransport(std::string client_name)
      : lib_(nats_library()), client_name_(std::move(client_name)), inbox_event_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}
  ~NatsTransport() override {
    close();
    if (inbox_event_ >= 0) ::close(inbox_event_);
  }

  Status connect(const std::string& host, uint16_t port) override {
    if (!lib_.library.ok()) return Error{"nats: " + lib_.library.error()};
    natsOptions* opts = nullptr;
    natsStatus s = lib_.natsOptions_Create(&opts);
    std::string url = "nats://" + host + ":" + std::to_string(port);
    if (s == NATS_OK) s = lib_.natsOptions_SetURL(opts, url.c_str());
    if (s == NATS_OK) s = lib_.natsOptions_SetName(opts, client_name_.c_str());
    if (s == NATS_OK) s = lib_.natsOptions_SetAllowReconnect(opts, false);
    if (s == NATS_OK) s = lib_.natsOptions_SetTimeout(opts, kConnectTimeoutMs);
    if (s == NATS_OK) s = lib_.natsConnection_Connect(&conn_, opts);
    lib_.natsOptions_Destroy(opts);
    if (s != NATS_OK) return nats_error(lib_, "connect to " + url, s);
    return Ok{};
  }

  Status advertise(uint32_t index, std::string_view topic) override {
    names_.set(index, topic);
    return Ok{};
  }

  PublishResult publish(uint32_t index, std::span<const uint8_t> payload) override {
    const std::string* subject = names_.find(index);
    if (conn_ == nullptr || subject == nullptr) return PublishResult::Failed;
    natsStatus s = lib_.natsConnection_Publish(conn_, subject->c_str(), payload.data(), static_cast<int>(payload.size()));
    if (s == NATS_OK) return PublishResult::Sent;
    if (s == NATS_INSUFFICIENT_BUFFER || s == NATS_NO_MEMORY) return PublishResult::BackPressure;
    return PublishResult::Failed;
  }

  Status subscribe(std::string_view pattern) override {
    if (conn_ == nullptr) return Error{"nats: not connected"};
    std::string subject = map_pattern(TransportKind::Nats, pattern);
    natsSubscription* sub = nullptr;
    natsStatus s = lib_.natsConnection_Subscribe(&sub, conn_, subject.c_str(), &NatsTransport::on_nats_message, this);
    if (s != NATS_OK) return nats_error(lib_, "subscribe " + subject, s);
    lib_.natsSubscription_SetPendingLimits(sub, kPendingMsgLimit, kPendingBytesLimit);
    subs_.push_back(sub);
    return Ok{};
  }

  Status sync(int timeout_ms) override {
    if (conn_ == nullptr) return Error{"nats: not connected"};
    natsStatus s = lib_.natsConnection_FlushTimeout(conn_, timeout_ms);  // PING/PONG round trip
    if (s != NATS_OK) return nats_error(lib_, "flush", s);
    return Ok{};
  }

  int poll(int timeout_ms) override {
    if (conn_ == nullptr || lib_.natsConnection_IsClosed(conn_)) return -1;
    if (timeout_ms > 0) {
      pollfd ready{inbox_event_, POLLIN, 0};
      ::poll(&ready, 1, timeout_ms);
    }
    // Reset the signal before taking the inbox: a message added after the
    // swap finds the inbox empty and signals again.
    uint64_t signals;
    [[maybe_unused]] ssize_t n = ::read(inbox_event_, &signals, sizeof signals);
    {
      std::lock_guard lock(inbox_mutex_);
      batch_.swap(inbox_);  // both keep their capacity: no allocation once warm
    }
    for (natsMsg* msg : batch_) deliver(msg);
    int handled = static_cast<int>(batch_.size());
    batch_.clear();
    return handled;
  }

  int wait_fd() const override { return conn_ != nullptr ? inbox_event_ : -1; }

  Status flush() override {
    // libnats' flusher thread writes the buffer soon after a publish; a
    // blocking round trip here would cost more than it saves.
    if (conn_ == nullptr || lib_.natsConnection_IsClosed(conn_)) return Error{"nats: connection closed"};
    return Ok{};
  }

  void close() override {
    for (natsSubscription* sub : subs_) {
      lib_.natsSubscription_Unsubscribe(sub);
      lib_.natsSubscription_Destroy(sub);
    }
    subs_.clear();
    if (conn_ != nullptr) {
      lib_.natsConnection_FlushTimeout(conn_, 2000);
      lib_.natsConnection_Destroy(conn_);
      conn_ = nullptr;
    }
    std::lock_guard lock(inbox_mutex_);
    for (natsMsg* msg : inbox_) lib_.natsMsg_Destroy(msg);
    inbox_.clear();
  }

 private:
  // Runs on a libnats thread.
  static void on_nats_message(natsConnection*, natsSubscription*, natsMsg* msg, void* self) {
    auto* t = static_cast<NatsTransport*>(self);
    bool was_empty;
    {
      std::lock_guard lock(t->inbox_mutex_);
      was_empty = t->inbox_.empty();
      t->inbox_.push_back(msg);
    }
    uint64_t one = 1;
    if (was_empty) [[maybe_unused]] ssize_t n = ::write(t->inbox_event_, &one, sizeof one);
  }

  void deliver(natsMsg* msg) {
    if (handler_) {
      std::span<const uint8_t> payload(reinterpret_cast<const uint8_t*>(lib_.natsMsg_GetData(msg)),
                                       static_cast<size_t>(lib_.natsMsg_GetDataLength(msg)));
      handler_(Received{lib_.natsMsg_GetSubject(msg), payload, false});
    }
    lib_.natsMsg_Destroy(msg);
  }

  const Nats& lib_;
  std::string client_name_;
  natsConnection* conn_ = nullptr;
  std::vector<natsSubscription*> subs_;
  TopicNames names_{TransportKind::Nats};
  std::mutex inbox_mutex_;
  int inbox_event_;  // eventfd: readable while the inbox may hold messages
  std::vector<natsMsg*> inbox_;  // filled by libnats threads
  std::vector<natsMsg*> batch_;  // being delivered by poll()
};

}  // namespace

std::unique_ptr<Transport> make_nats_transport(const std::string& client_name) {
  return std::make_unique<NatsTransport>(client_name);
}

}  // namespace tw::perf
