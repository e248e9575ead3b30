#include "admin/sys_topics.h"

#include <chrono>

#include "broker/router.h"

namespace tw::admin {

std::vector<std::pair<std::string, std::string>> SysTopics::figures(const Sample& sample, uint64_t uptime_s) {
  const tier::LoopSnapshot& t = sample.totals;
  // Asked of the access points now; the snapshots' count when one did not answer in time.
  const uint64_t connected = sample.connections ? sample.connections->open : t.counters.connections_open;
  std::vector<std::pair<std::string, std::string>> out = {
      {"$SYS/broker/version", std::string("tickwired version ") + TW_VERSION},
      {"$SYS/broker/uptime", std::to_string(uptime_s) + " seconds"},
      {"$SYS/broker/clients/connected", std::to_string(connected)},
      {"$SYS/broker/messages/received", std::to_string(t.router.publishes)},
      {"$SYS/broker/messages/sent", std::to_string(t.router.deliveries)},
      {"$SYS/broker/bytes/received", std::to_string(t.counters.bytes_in)},
      {"$SYS/broker/bytes/sent", std::to_string(t.counters.bytes_out)},
  };
  if (sample.connections) {
    out.emplace_back("$SYS/broker/subscriptions/count", std::to_string(sample.connections->subscriptions));
  }
  return out;
}

void SysTopics::start() {
  if (interval_ms_ == 0) return;
  thread_ = std::thread([this] { run(); });
}

void SysTopics::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SysTopics::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    publish_all();
    lock.lock();
    wake_.wait_for(lock, std::chrono::milliseconds(interval_ms_), [this] { return stopping_; });
  }
}

// Each figure replaces its channel's image on the loop that owns the topic;
// posted, not awaited: a busy loop publishes it on its next tick.
void SysTopics::publish_all() {
  const Sample sample = stats_.sample();
  const uint64_t uptime_s = (sample.wall_ms - stats_.start_wall_ms()) / 1000;
  const tier::Broker& broker = stats_.broker();
  for (auto& [topic, text] : figures(sample, uptime_s)) {
    const tier::Broker::Loop owner = broker.loops()[broker.owner_of(topic)];
    broker::Router* router = &router_of(owner);
    inbox_of(owner).post([router, topic = std::move(topic), text = std::move(text)] {
      cache::ChannelId id = 0;
      if (!router->advertise(topic, wire::PayloadKind::Opaque, id).ok()) return;
      const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
      (void)router->publish(id, std::span<const uint8_t>(bytes, text.size()), /*image=*/true);
    });
  }
}

}  // namespace tw::admin
