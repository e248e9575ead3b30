// The log store's recovery read (src/store) on arbitrary bytes as the last
// segment of a log: whatever the file holds, opening it keeps a prefix of
// whole records with consecutive sequence numbers, cuts the rest, and the
// log it leaves reads back and takes appends.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "store/log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  // On tmpfs where there is one: its fsyncs cost nothing, so the fuzzer runs inputs, not disk flushes.
  static const fs::path dir = (fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path()) /
                              ("tw-store-fuzz-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(tw::store::Segment::log_name(dir.string(), 1), std::ios::binary)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  tw::store::Recovery recovery;
  auto log = tw::store::Log::open(dir.string(), {}, &recovery);
  if (!log) std::abort();  // the last segment is always recoverable
  uint64_t expected = 1;
  tw::Status read = (*log)->read(1, [&](const tw::store::Record& r) {
    if (r.seq != expected++) std::abort();
    return true;
  });
  if (!read || expected != recovery.next_seq) std::abort();
  if (!(*log)->append(0, 0, "T/x", {data, std::min<size_t>(size, 16)}) || !(*log)->sync()) std::abort();
  log->reset();
  fs::remove_all(dir);  // libFuzzer ends without static destructors: nothing may be left behind
  return 0;
}
