// tw::fix::Gateway: the QuickFIX engine, the router, drop copies and /metrics
// of one tickwire-fix process (docs/fix.md).
#pragma once
#include <memory>
#include <mutex>
#include <string>

#include "fix/drop_copy.h"
#include "fix/engine.h"
#include "fix/gateway_config.h"
#include "fix/router.h"

namespace tw::http {
class Server;
}

namespace tw::fix {

class Gateway : public EngineEvents {
 public:
  explicit Gateway(GatewayConfig config);
  ~Gateway() override;  // stop()
  // Starts the drop-copy publisher, the FIX sessions and the metrics listener.
  Status start();
  void stop();
  // The metrics listener's bound port (0 when there is none).
  uint16_t metrics_port() const { return metrics_port_; }
  std::string render_metrics() const;
  // GET /api/v1/fix: the same state as JSON, for `tickwire top --fix`.
  std::string render_json() const;

  // EngineEvents (QuickFIX's threads).
  void on_logon(const std::string& session) override;
  void on_logout(const std::string& session) override;
  Verdict on_message(const std::string& session, const FixMessage& message, bool poss_dup) override;

 private:
  Status start_metrics();

  GatewayConfig config_;
  std::unique_ptr<Engine> engine_;
  mutable std::mutex mutex_;  // the router's state and counters
  Router router_;
  std::unique_ptr<DropCopyPublisher> drop_copies_;
  std::unique_ptr<http::Server> http_;
  uint16_t metrics_port_ = 0;
};

}  // namespace tw::fix
