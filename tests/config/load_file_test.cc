// load_file reads a real file; errors carry its path.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "config/config.h"

namespace tw::config {
namespace {

class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    char name[] = "/tmp/tw_config_testXXXXXX";
    int fd = mkstemp(name);
    EXPECT_GE(fd, 0);
    close(fd);
    path_ = name;
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(LoadFile, ReadsAFile) {
  TempFile file("listen = \"[::1]:9401\"\n[limits]\nmax_channels = 5\n");
  auto result = load_file(file.path());
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->listen, "[::1]:9401");
  EXPECT_EQ(result->limits.max_channels, 5u);
}

TEST(LoadFile, ErrorsNameThePath) {
  TempFile file("\n\nheartbeat_ms = true\n");
  auto result = load_file(file.path());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, file.path() + ":3: key 'heartbeat_ms': expected an integer");
}

TEST(LoadFile, MissingFileIsAnError) {
  auto result = load_file("/nonexistent/tickwire/broker.toml");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message,
            "cannot read /nonexistent/tickwire/broker.toml: No such file or directory");
}

}  // namespace
}  // namespace tw::config
