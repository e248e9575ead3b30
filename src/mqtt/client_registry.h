// ClientRegistry: which connection holds each MQTT client identifier, so
// that a new CONNECT with an identifier in use takes it over
// ([MQTT-3.1.4-2]): the older connection is told to go, and closes itself
// with DISCONNECT 0x8E (Session taken over) on its loop's next tick.
//
// Process-wide (a broker is one process), and shared by every loop thread:
// a mutex guards it, taken at CONNECT and at a connection's end only, never
// per message. A connection registers an atomic flag it owns and removes it
// (under the mutex) before it is destroyed, so a flag in the map is alive.
#pragma once
#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tw::mqtt {

class ClientRegistry {
 public:
  static ClientRegistry& instance();

  // `taken_over` becomes the holder of `client_id`; the previous holder's flag is set.
  void claim(const std::string& client_id, std::atomic<bool>* taken_over);
  // Removes the entry if `taken_over` still holds it.
  void release(const std::string& client_id, const std::atomic<bool>* taken_over);

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::atomic<bool>*> holders_;
};

}  // namespace tw::mqtt
