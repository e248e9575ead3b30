// The installed client library (docs/client.md, "Installing"): install into a
// temporary prefix, build examples/ out of the tree with CMake and with
// pkg-config, run the result against a real broker (install_and_build.sh).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <utility>

#include "testlib/process.h"

namespace {

// Runs one of this folder's scripts with its arguments; its exit status and output.
std::pair<int, std::string> run_script(const std::string& script, const std::string& args) {
  std::string command = std::string(TW_SOURCE_DIR) + "/tests/package/" + script + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string output;
  char chunk[4096];
  while (size_t n = fread(chunk, 1, sizeof chunk, pipe)) output.append(chunk, n);
  return {pclose(pipe), output};
}

TEST(ClientPackage, InstallsAndBuildsTheExamplesOutOfTree) {
  tw::testing::TempDir work;
  auto [status, output] =
      run_script("install_and_build.sh", std::string(TW_BUILD_DIR) + " " + TW_SOURCE_DIR + " " + work.path());
  EXPECT_EQ(status, 0) << output;
}

// The Debian packages (cmake/debian_package.cmake): contents, control data and lintian's verdict.
TEST(DebianPackage, HoldsTheServiceTheToolsAndTheLibraryAndPassesLintian) {
  if (system("command -v lintian >/dev/null && command -v dpkg-deb >/dev/null") != 0)
    GTEST_SKIP() << "lintian or dpkg-deb missing (scripts/deps.sh installs them)";
  tw::testing::TempDir work;
  auto [status, output] = run_script("deb_check.sh", std::string(TW_BUILD_DIR) + " " + work.path());
  EXPECT_EQ(status, 0) << output;
  std::printf("%s", output.c_str());
}

}  // namespace
