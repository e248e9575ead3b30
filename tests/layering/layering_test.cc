// scripts/check_layering.py: the sources keep their layers, and the checker
// catches an include of a module that is not linked (on a small tree of its own).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "testlib/process.h"

namespace tw {
namespace {

namespace fs = std::filesystem;
const std::string kChecker = std::string(TW_SOURCE_DIR) + "/scripts/check_layering.py";

struct Checked {
  testing::ExitStatus status;
  std::string out;
};

Checked check(const std::vector<fs::path>& roots) {
  std::vector<std::string> args = {kChecker};
  for (const fs::path& root : roots) args.push_back(root.string());
  testing::Process checker("/usr/bin/python3", args);
  auto status = checker.wait(60'000);
  return {status.value_or(checker.stop()), checker.out() + checker.err()};
}

// Three modules: tw_low; tw_mid links tw_low; tw_top links tw_mid (and so tw_low).
class LayeringTree : public ::testing::Test {
 protected:
  void SetUp() override {
    src_ = fs::temp_directory_path() / ("tw-layering-" + std::to_string(::getpid()));
    fs::remove_all(src_);
    write("low/CMakeLists.txt", "add_library(tw_low low.cc)\ntarget_link_libraries(tw_low PUBLIC Threads::Threads)\n");
    write("mid/CMakeLists.txt", "add_library(tw_mid mid.cc)\ntarget_link_libraries(tw_mid PUBLIC tw_low)\n");
    write("top/CMakeLists.txt", "add_library(tw_top top.cc)\ntarget_link_libraries(tw_top PRIVATE tw_mid)\n");
    write("low/low.h", "#pragma once\n");
    write("low/low.cc", "#include \"low/low.h\"\n#include <vector>\n");
    write("mid/mid.h", "#pragma once\n#include \"low/low.h\"\n");
    write("mid/mid.cc", "#include \"mid/mid.h\"\n");
    write("top/top.cc", "#include \"mid/mid.h\"\n#include \"low/low.h\"  // through tw_mid\n");
  }
  void TearDown() override { fs::remove_all(src_); }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((src_ / rel).parent_path());
    std::ofstream(src_ / rel) << text;
  }
  fs::path src_;
};

TEST(Layering, TheSourcesIncludeOnlyTheModulesTheyLink) {
  const fs::path root(TW_SOURCE_DIR);
  Checked result = check({root / "src", root / "tools", root / "include" / "tickwire"});
  EXPECT_TRUE(result.status.clean()) << result.out;
  EXPECT_NE(result.out.find("layering: 0 violation(s)"), std::string::npos) << result.out;
}

TEST_F(LayeringTree, IncludesOfLinkedModulesDirectlyOrThroughOthersPass) {
  Checked result = check({src_});
  EXPECT_TRUE(result.status.clean()) << result.out;
}

TEST_F(LayeringTree, AnIncludeOfAModuleAboveFails) {
  write("low/low.cc", "#include \"low/low.h\"\n#include \"top/top.h\"\n");
  write("top/top.h", "#pragma once\n");
  Checked result = check({src_});
  EXPECT_EQ(result.status.code, 1) << result.out;
  EXPECT_NE(result.out.find("low/low.cc: includes \"top/top.h\" (tw_top), but tw_low does not link it"),
            std::string::npos)
      << result.out;
}

TEST_F(LayeringTree, AHeaderIsHeldToItsLibrarysLinks) {
  write("mid/mid.h", "#pragma once\n#include \"top/top.h\"\n");
  write("top/top.h", "#pragma once\n");
  Checked result = check({src_});
  EXPECT_EQ(result.status.code, 1) << result.out;
  EXPECT_NE(result.out.find("mid/mid.h: includes \"top/top.h\""), std::string::npos) << result.out;
}

TEST_F(LayeringTree, AToolIsHeldToItsLinksToo) {
  write("tools/tool/CMakeLists.txt", "add_library(tw_tool tool.cc)\ntarget_link_libraries(tw_tool PUBLIC tw_mid)\n");
  write("tools/tool/tool.cc", "#include \"low/low.h\"\n#include \"top/top.h\"\n");
  write("top/top.h", "#pragma once\n");
  fs::rename(src_ / "tools", fs::temp_directory_path() / ("tw-layering-tools-" + std::to_string(::getpid())));
  const fs::path moved = fs::temp_directory_path() / ("tw-layering-tools-" + std::to_string(::getpid()));
  Checked result = check({src_, moved});
  fs::remove_all(moved);
  EXPECT_EQ(result.status.code, 1) << result.out;
  EXPECT_NE(result.out.find("tool/tool.cc: includes \"top/top.h\" (tw_top), but tw_tool does not link it"),
            std::string::npos)
      << result.out;
  EXPECT_EQ(result.out.find("low/low.h\""), std::string::npos) << "tw_tool reaches tw_low through tw_mid";
}

// tw_top links tw_mid PRIVATE: what links tw_top may not include tw_mid's headers through it.
TEST_F(LayeringTree, APrivateLinkIsNotPassedOn) {
  write("above/CMakeLists.txt", "add_library(tw_above above.cc)\ntarget_link_libraries(tw_above PUBLIC tw_top)\n");
  write("above/above.cc", "#include \"mid/mid.h\"\n");
  Checked result = check({src_});
  EXPECT_EQ(result.status.code, 1) << result.out;
  EXPECT_NE(result.out.find("above/above.cc: includes \"mid/mid.h\" (tw_mid), but tw_above does not link it"),
            std::string::npos)
      << result.out;
}

// The public headers (include/tickwire/MODULE/...) belong to their folder's module, and are
// included as "tickwire/MODULE/...".
TEST_F(LayeringTree, APublicHeaderBelongsToItsFoldersModule) {
  const fs::path pub = fs::temp_directory_path() / ("tw-layering-public-" + std::to_string(::getpid())) / "tickwire";
  fs::create_directories(pub / "low");
  fs::create_directories(pub / "top");
  std::ofstream(pub / "low" / "api.h") << "#pragma once\n#include \"low/low.h\"\n";
  std::ofstream(pub / "top" / "api.h") << "#pragma once\n#include \"tickwire/low/api.h\"\n";
  write("top/top.cc", "#include \"tickwire/low/api.h\"\n#include \"tickwire/top/api.h\"\n");
  Checked linked = check({src_, pub});
  write("mid/mid.cc", "#include \"tickwire/top/api.h\"\n");
  std::ofstream(pub / "low" / "api.h") << "#pragma once\n#include \"mid/mid.h\"\n";
  Checked unlinked = check({src_, pub});
  fs::remove_all(pub.parent_path());
  EXPECT_TRUE(linked.status.clean()) << linked.out;
  EXPECT_EQ(unlinked.status.code, 1) << unlinked.out;
  EXPECT_NE(unlinked.out.find("mid/mid.cc: includes \"tickwire/top/api.h\" (tw_top), but tw_mid does not link it"),
            std::string::npos)
      << unlinked.out;
  EXPECT_NE(unlinked.out.find("low/api.h: includes \"mid/mid.h\" (tw_mid), but tw_low does not link it"),
            std::string::npos)
      << unlinked.out;
}

}  // namespace
}  // namespace tw
