// ServerState: what the MQTT sessions of one broker share across its loop
// threads: who holds each client identifier, the sessions kept between
// connections (client_registry.h), the Wills waiting for their Will Delay
// Interval (pending_wills.h), and the shared subscription groups
// (shared_groups.h). The broker owns one and hands it to every MqttSession
// it makes (tier/protocols.cc); nothing about MQTT is process-wide, so two
// brokers in one process (tests, a cascade) never see each other's clients.
// With a store, the stored sessions are also on disk (session_file.h): read
// into `clients` once, at the first CONNECT after the broker starts.
#pragma once
#include <mutex>

#include "mqtt/client_registry.h"
#include "mqtt/pending_wills.h"
#include "mqtt/shared_groups.h"

namespace tw::mqtt {

struct ServerState {
  ClientRegistry clients;
  PendingWills wills;
  SharedGroups groups;
  std::once_flag sessions_loaded;
};

}  // namespace tw::mqtt
