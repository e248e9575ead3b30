// The admin API (docs/operations.md): /metrics, /healthz, /readyz, the JSON
// API under /api/v1 (statistics, server-sent events, admin actions, REST
// publish and snapshot), registered on the HTTP listener's Routes. Every
// handler runs on the listener's thread; what lives on a loop is asked of
// that loop (tier/loop_inbox.h), never read from here.
#pragma once
#include <memory>
#include <string>

#include "admin/statistics.h"
#include "http/route.h"

namespace tw::admin {

class Api {
 public:
  explicit Api(tier::Broker& broker) : stats_(broker) {}
  // Adds every route; the Api must outlive the listener that serves them.
  void install(http::Routes& routes);

  Statistics& statistics() { return stats_; }

  // The handlers, public for tests (they call them without a listener).
  http::Response metrics(const http::Request& req);
  http::Response healthz(const http::Request& req);
  http::Response readyz(const http::Request& req);
  http::Response stats(const http::Request& req);
  http::Response events(const http::Request& req);
  http::Response connections(const http::Request& req);
  http::Response queues(const http::Request& req);
  // POST/DELETE /api/v1/queues/NAME, GET /api/v1/queues/NAME/messages, POST /api/v1/queues/NAME/purge (queue_actions.cc).
  http::Response queue_action(const http::Request& req);
  http::Response channels(const http::Request& req);
  http::Response services(const http::Request& req);
  http::Response loops(const http::Request& req);
  http::Response links(const http::Request& req);
  http::Response ha(const http::Request& req);
  http::Response fields(const http::Request& req);
  http::Response subscriptions(const http::Request& req);
  http::Response disconnect(const http::Request& req);
  http::Response close_channel(const http::Request& req);
  http::Response publish(const http::Request& req);
  http::Response snapshot(const http::Request& req);

 private:
  std::string event_json();
  Statistics stats_;
};

}  // namespace tw::admin
