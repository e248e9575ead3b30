// Transport: how a session's bytes cross the connection. Plain TCP moves them
// with read/writev on the socket; TLS (tls_transport.h) encrypts them first.
// A session reads and writes only through this seam, so every protocol
// (native, MQTT, WebSocket) runs over every transport.
//
// Owned by one session on one loop thread. The transport owns the fd and
// closes it when destroyed.
#pragma once
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "auth/certificate_names.h"
#include "io/out_queue.h"

namespace tw::session {

enum class ReadStatus { Data, Again, Closed, Error };
struct ReadResult {
  ReadStatus status = ReadStatus::Again;
  size_t bytes = 0;  // with Data: bytes placed at the start of the buffer
};

enum class Handshake { Done, WantRead, WantWrite, Failed };

// io::Writer::writev: bytes on their way to the peer (0 when the connection
// takes nothing now), -1 on a fatal error. Bytes not reported stay the
// caller's, so its queue keeps them and it waits for EPOLLOUT.
class Transport : public io::Writer {
 public:
  ~Transport() override = default;
  virtual int fd() const = 0;
  // Moves the handshake on; Done once application bytes can flow (at once for TCP).
  virtual Handshake handshake() = 0;
  virtual ReadResult read(std::span<uint8_t> out) = 0;
  // Bytes readable now without another readiness event (TLS records already
  // decrypted): the session reads again before it waits.
  virtual size_t pending_input() const { return 0; }
  // Best-effort orderly end (TLS close_notify), then shutdown(2). Does not close the fd.
  virtual void shutdown() = 0;
  virtual std::string_view kind() const = 0;  // "tcp", "tls"
  // Why the handshake or the last read/write failed, for the session's log line.
  virtual std::string error_text() const { return {}; }
  // The authenticated peer (a TLS client certificate's subject), "" if none.
  virtual std::string peer_identity() const { return {}; }
  // Every name the peer's certificate carries, by kind, for mapping it to a
  // user: its subject (as peer_identity) and its DNS, email, URI and IP
  // subjectAltNames. Empty if none.
  virtual auth::CertificateNames peer_names() const { return {}; }
};

}  // namespace tw::session
