// The client libraries of perf's mqtt and nats transports (libmosquitto,
// libnats), opened when a transport first needs one (dlopen) instead of
// linked: the tickwire CLI ships in the broker's Debian package, which must
// not depend on perf's peers (docs/perf.md, "Transports"). Without the
// library, only that transport fails, with a message naming the package.
#pragma once
#include <string>

namespace tw::perf {

class PeerLibrary {
 public:
  // `soname`: the library's SONAME (e.g. libmosquitto.so.1); `package`: the
  // Debian package that holds it, for the error message.
  PeerLibrary(const char* soname, const char* package);
  PeerLibrary(const PeerLibrary&) = delete;
  PeerLibrary& operator=(const PeerLibrary&) = delete;

  // Loaded, and every symbol asked for so far found.
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  // The function `name` as type F; null (and ok() false) when missing.
  template <typename F>
  F symbol(const char* name) {
    return reinterpret_cast<F>(find(name));
  }

 private:
  void* find(const char* name);

  void* handle_ = nullptr;
  std::string error_;
};

}  // namespace tw::perf

// Inside a struct whose first member is `PeerLibrary library`: a member named
// like the library's function `fn`, with its type, looked up at construction.
#define TW_PEER_FUNCTION(fn) decltype(&::fn) fn = library.symbol<decltype(&::fn)>(#fn)
