// The broker under test, when the orchestrator starts it: tickwired on an
// ephemeral port (its --print-port-file tells which), or any command line
// with {port} replaced by a free port (nats-server, mosquitto).
#pragma once
#include <string>

#include "tickwire/base/result.h"
#include "perf/run/child_process.h"

namespace tw::perf::run {

struct StartedBroker {
  Child process;
  std::string address;  // 127.0.0.1:PORT
};

// tickwired --listen 127.0.0.1:0 --print-port-file DIR/tickwired.port; logs to DIR/broker.log.
Result<StartedBroker> start_tickwired(const std::string& tickwired, const std::string& dir);
// /bin/sh -c "exec COMMAND" with {port} replaced; ready once the port accepts connections.
Result<StartedBroker> start_broker_command(const std::string& command, const std::string& dir);

// Replaces every {port} in command.
std::string substitute_port(const std::string& command, int port);

}  // namespace tw::perf::run
