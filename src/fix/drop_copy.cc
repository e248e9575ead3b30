#include "fix/drop_copy.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "base/unicode.h"
#include "tickwire/client/client.h"
#include "tickwire/fields/field_list.h"

namespace tw::fix {
namespace {

constexpr uint16_t kTimact = 5;  // the built-in field dictionary's TIMACT
constexpr int kMaxTag = 65535 - kTagBase;
constexpr auto kGather = std::chrono::microseconds(500);

uint64_t now_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

}  // namespace

std::vector<uint8_t> encode_drop_copy(const DropCopy& copy, uint64_t time_ns) {
  size_t size = 2 + 3 + 8 + 5 + copy.event.size() + 5 + copy.message.msg_type.size();
  for (const auto& f : copy.message.fields) size += 5 + f.second.size();
  std::vector<uint8_t> out(size);
  fields::FieldListWriter w(out);
  w.add_string(kTagBase, copy.event);
  w.add_time(kTimact, time_ns);
  w.add_string(kTagBase + 35, copy.message.msg_type);
  for (const auto& [t, value] : copy.message.fields) {
    if (t <= 0 || t > kMaxTag || t == 35) continue;
    const auto id = static_cast<uint16_t>(kTagBase + t);
    // FIX text is bytes (often Latin-1); a STRING must be UTF-8, else BYTES.
    if (unicode::valid_utf8(value)) w.add_string(id, value);
    else w.add_bytes(id, std::span(reinterpret_cast<const uint8_t*>(value.data()), value.size()));
  }
  out.resize(w.finish());
  return out;
}

std::string drop_copy_topic(const std::string& prefix, const DropCopy& copy) {
  return prefix + "/" + copy.client + "/" + copy.exchange;
}

DropCopyPublisher::DropCopyPublisher(client::Options options, std::string prefix)
    : options_(std::move(options)), prefix_(std::move(prefix)) {
  options_.reconnect = true;
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

DropCopyPublisher::~DropCopyPublisher() {
  stop();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void DropCopyPublisher::start() { thread_ = std::thread([this] { run(); }); }

void DropCopyPublisher::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  uint64_t one = 1;
  if (::write(wake_fd_, &one, sizeof one) < 0) {
  }
  if (thread_.joinable()) thread_.join();
}

void DropCopyPublisher::add(std::vector<DropCopy> copies) {
  if (copies.empty()) return;
  bool was_empty;
  {
    std::lock_guard lock(mutex_);
    was_empty = queue_.empty();
    for (auto& c : copies) queue_.push_back(std::move(c));
  }
  uint64_t one = 1;
  if (was_empty && ::write(wake_fd_, &one, sizeof one) < 0) {
    // The counter is saturated: the thread is awake anyway.
  }
}

void DropCopyPublisher::run() {
  client::Client client;
  client.on_connection([this](client::ConnectionEvent event, std::string_view) {
    connected_ = event != client::ConnectionEvent::Disconnected;
  });
  // The broker may start after the gateway: keep trying, never block the FIX side.
  auto connect = [&] {
    if (client.connect(options_)) connected_ = true;
  };
  connect();
  std::vector<DropCopy> batch;
  auto last_attempt = std::chrono::steady_clock::now();
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) break;
      batch.swap(queue_);
    }
    const uint64_t t = now_ns();
    for (const DropCopy& copy : batch) {
      auto payload = encode_drop_copy(copy, t);
      bool sent = client.connected() && client.publish(drop_copy_topic(prefix_, copy), payload, true);
      if (!sent && client.connected()) {  // back pressure: drain, then one more try
        client.poll(10);
        sent = client.connected() && client.publish(drop_copy_topic(prefix_, copy), payload, true);
      }
      (sent ? counters_.published : counters_.dropped).fetch_add(1, std::memory_order_relaxed);
    }
    batch.clear();
    if (!client.connected() && client.poll(0) < 0) {  // never connected: connect() again now and then
      auto now = std::chrono::steady_clock::now();
      if (now - last_attempt > std::chrono::seconds(1)) {
        last_attempt = now;
        connect();
      }
    }
    pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {client.socket_fd(), POLLIN, 0}};
    // Output the socket did not take yet: come back soon to flush it.
    int n = ::poll(fds, client.socket_fd() >= 0 ? 2 : 1, client.pending_output() > 0 ? 1 : 100);
    if (n > 0 && (fds[0].revents & POLLIN)) {
      uint64_t count;
      if (::read(wake_fd_, &count, sizeof count) < 0) {
      }
      // Let copies gather: at thousands of orders a second one wake-up and
      // one send() then carry several, instead of a handful of system calls
      // per copy (bench/fix). Costs a drop copy at most this much delay.
      std::this_thread::sleep_for(kGather);
    }
    client.poll(0);
  }
  client.close();
}

}  // namespace tw::fix
