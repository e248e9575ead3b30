// nats: libnats. libnats delivers subscription messages on its own threads;
// they only append the message to inbox_ (under a mutex), signal an eventfd
// when the inbox stops being empty, and poll() hands them to the handler on
// the owning thread, so the handler needs no locking and any number of
// subscriptions (and, through wait_fd(), connections) share one wait. Publishes are buffered by
// libnats and written by its flusher thread.
#include <nats/nats.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "perf/transport.h"

namespace tw::perf {

namespace {

constexpr int64_t kConnectTimeoutMs = 5000;
// Room for bursts before libnats declares us a slow consumer and drops.
constexpr int kPendingMsgLimit = 4 << 20;
constexpr int kPendingBytesLimit = 1 << 30;

Error nats_error(const std::string& what, natsStatus s) {
  return Error{"nats: " + what + ": " + natsStatus_GetText(s)};
}

class NatsTransport final : public Transport {
 public:
  explicit NatsTransport(std::string client_name)
      : client_name_(std::move(client_name)), inbox_event_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}
  ~NatsTransport() override {
    close();
    if (inbox_event_ >= 0) ::close(inbox_event_);
  }

  Status connect(const std::string& host, uint16_t port) override {
    natsOptions* opts = nullptr;
    natsStatus s = natsOptions_Create(&opts);
    std::string url = "nats://" + host + ":" + std::to_string(port);
    if (s == NATS_OK) s = natsOptions_SetURL(opts, url.c_str());
    if (s == NATS_OK) s = natsOptions_SetName(opts, client_name_.c_str());
    if (s == NATS_OK) s = natsOptions_SetAllowReconnect(opts, false);
    if (s == NATS_OK) s = natsOptions_SetTimeout(opts, kConnectTimeoutMs);
    if (s == NATS_OK) s = natsConnection_Connect(&conn_, opts);
    natsOptions_Destroy(opts);
    if (s != NATS_OK) return nats_error("connect to " + url, s);
    return Ok{};
  }

  Status advertise(uint32_t index, std::string_view topic) override {
    names_.set(index, topic);
    return Ok{};
  }

  PublishResult publish(uint32_t index, std::span<const uint8_t> payload) override {
    const std::string* subject = names_.find(index);
    if (conn_ == nullptr || subject == nullptr) return PublishResult::Failed;
    natsStatus s = natsConnection_Publish(conn_, subject->c_str(), payload.data(), static_cast<int>(payload.size()));
    if (s == NATS_OK) return PublishResult::Sent;
    if (s == NATS_INSUFFICIENT_BUFFER || s == NATS_NO_MEMORY) return PublishResult::BackPressure;
    return PublishResult::Failed;
  }

  Status subscribe(std::string_view pattern) override {
    if (conn_ == nullptr) return Error{"nats: not connected"};
    std::string subject = map_pattern(TransportKind::Nats, pattern);
    natsSubscription* sub = nullptr;
    natsStatus s = natsConnection_Subscribe(&sub, conn_, subject.c_str(), &NatsTransport::on_nats_message, this);
    if (s != NATS_OK) return nats_error("subscribe " + subject, s);
    natsSubscription_SetPendingLimits(sub, kPendingMsgLimit, kPendingBytesLimit);
    subs_.push_back(sub);
    return Ok{};
  }

  Status sync(int timeout_ms) override {
    if (conn_ == nullptr) return Error{"nats: not connected"};
    natsStatus s = natsConnection_FlushTimeout(conn_, timeout_ms);  // PING/PONG round trip
    if (s != NATS_OK) return nats_error("flush", s);
    return Ok{};
  }

  int poll(int timeout_ms) override {
    if (conn_ == nullptr || natsConnection_IsClosed(conn_)) return -1;
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
    if (conn_ == nullptr || natsConnection_IsClosed(conn_)) return Error{"nats: connection closed"};
    return Ok{};
  }

  void close() override {
    for (natsSubscription* sub : subs_) {
      natsSubscription_Unsubscribe(sub);
      natsSubscription_Destroy(sub);
    }
    subs_.clear();
    if (conn_ != nullptr) {
      natsConnection_FlushTimeout(conn_, 2000);
      natsConnection_Destroy(conn_);
      conn_ = nullptr;
    }
    std::lock_guard lock(inbox_mutex_);
    for (natsMsg* msg : inbox_) natsMsg_Destroy(msg);
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
      std::span<const uint8_t> payload(reinterpret_cast<const uint8_t*>(natsMsg_GetData(msg)),
                                       static_cast<size_t>(natsMsg_GetDataLength(msg)));
      handler_(Received{natsMsg_GetSubject(msg), payload, false});
    }
    natsMsg_Destroy(msg);
  }

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
