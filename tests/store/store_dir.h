// A fresh directory for one test's log, removed after it.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <string>

namespace tw::store::testing {

class StoreDir {
 public:
  explicit StoreDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() / ("tw-store-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
  }
  ~StoreDir() { std::filesystem::remove_all(path_); }
  std::string path() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::span<const uint8_t> bytes(std::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}
inline std::string text(std::span<const uint8_t> bytes) { return {bytes.begin(), bytes.end()}; }

}  // namespace tw::store::testing
