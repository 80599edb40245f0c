// One option for the file a report goes to (issue 35): `-o FILE` writes exactly what stdout
// would have shown, for render and replay as for validate and conform.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_testing.h"

namespace permitcheck::cli {
namespace {

std::string example() { return testing::source_dir() + "/docs/examples/client-over-return.jsonl"; }

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("permitcheck-" + name + "-" + std::to_string(::getpid())))
      .string();
}

TEST(OutputOption, RenderWritesToTheFileWhatItPrints) {
  const testing::Run printed = testing::run_permitcheck({"render", "--format", "mermaid", example()});
  ASSERT_EQ(printed.code, 0) << printed.err;
  const std::string path = temp_path("render");
  const testing::Run written =
      testing::run_permitcheck({"render", "--format", "mermaid", "-o", path, example()});
  EXPECT_EQ(written.code, 0) << written.err;
  EXPECT_EQ(written.out, "");
  EXPECT_EQ(testing::read_file(path), printed.out);
  EXPECT_THAT(printed.out, ::testing::HasSubstr("sequenceDiagram"));
  std::filesystem::remove(path);
}

TEST(OutputOption, ReplayWritesToTheFileWhatItPrintsAndKeepsItsExitCode) {
  const testing::Run printed = testing::run_permitcheck({"replay", example()});
  const std::string path = temp_path("replay");
  const testing::Run written = testing::run_permitcheck({"replay", "--output", path, example()});
  EXPECT_EQ(written.code, printed.code);
  EXPECT_EQ(written.code, 1);  // the example breaks E2 under its own ruleset
  EXPECT_EQ(written.out, "");
  EXPECT_EQ(testing::read_file(path), printed.out);
  std::filesystem::remove(path);
}

TEST(OutputOption, AnUnwritableFileIsBadInput) {
  const testing::Run r =
      testing::run_permitcheck({"render", "-o", "/nonexistent-dir/r.txt", example()});
  EXPECT_EQ(r.code, 2);
}

}  // namespace
}  // namespace permitcheck::cli
