// Non-blocking TCP client sockets: the only place the client touches the socket API.
#pragma once
#include <cstdint>
#include <string>

#include "tickwire/base/result.h"

namespace tw::client {

// Resolves host (blocking: name lookup happens once per connection attempt),
// creates a non-blocking socket with TCP_NODELAY and starts connect().
// The connection is complete when the fd is writable and finish_connect() is ok.
Result<int> start_connect(const std::string& host, uint16_t port);
Status finish_connect(int fd);
void close_fd(int fd);

}  // namespace tw::client
