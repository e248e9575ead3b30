// The installed client library (docs/client.md, "Installing"): install into a
// temporary prefix, build examples/ out of the tree with CMake and with
// pkg-config, run the result against a real broker (install_and_build.sh).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "testlib/process.h"

namespace {

TEST(ClientPackage, InstallsAndBuildsTheExamplesOutOfTree) {
  tw::testing::TempDir work;
  std::string command = std::string(TW_SOURCE_DIR) + "/tests/package/install_and_build.sh " + TW_BUILD_DIR + " " +
                        TW_SOURCE_DIR + " " + work.path() + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char chunk[4096];
  while (size_t n = fread(chunk, 1, sizeof chunk, pipe)) output.append(chunk, n);
  int status = pclose(pipe);
  EXPECT_EQ(status, 0) << output;
}

}  // namespace
