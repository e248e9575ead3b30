#include "perf/peer_library.h"

#include <dlfcn.h>

namespace tw::perf {

PeerLibrary::PeerLibrary(const char* soname, const char* package) {
  handle_ = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    error_ = std::string("cannot load ") + soname + " (install the package " + package + "): " + dlerror();
  }
}

void* PeerLibrary::find(const char* name) {
  if (handle_ == nullptr) return nullptr;
  void* address = dlsym(handle_, name);
  if (address == nullptr && error_.empty()) error_ = std::string("the loaded library lacks ") + name;
  return address;
}

}  // namespace tw::perf
