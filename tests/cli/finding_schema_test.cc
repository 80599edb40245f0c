// One JSON shape for a finding across commands (issue 35): every finding in the JSON reports of
// validate, replay, conform, check and matrix validates against docs/schemas/finding.schema.json
// (python3-jsonschema), and the schema refuses a finding without its rule.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_testing.h"

namespace permitcheck::cli {
namespace {

struct Ran {
  int code = -1;
  std::string output;
};

Ran shell(const std::string& command) {
  Ran r;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) r.output += buf.data();
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class FindingSchema : public ::testing::Test {
 protected:
  void SetUp() override {
    if (shell("python3 -c 'import jsonschema'").code != 0) {
      GTEST_SKIP() << "python3 jsonschema is not installed (Debian python3-jsonschema)";
    }
  }
  // Writes `json` to a file and checks its findings; at least `least` of them.
  void expect_valid(const std::string& name, const std::string& json, int least = 1) {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("permitcheck-schema-" + name + "-" + std::to_string(::getpid())))
                                 .string();
    testing::write_file(path, json);
    const Ran r = shell("python3 " + testing::source_dir() + "/tests/cli/schema/check_findings.py " +
                        schema() + " " + path + " " + std::to_string(least));
    EXPECT_EQ(r.code, 0) << name << ": " << r.output << "\n" << json;
    std::filesystem::remove(path);
  }
  static std::string schema() { return testing::source_dir() + "/docs/schemas/finding.schema.json"; }
  static std::string example() {
    return testing::source_dir() + "/docs/examples/client-over-return.jsonl";
  }
};

TEST_F(FindingSchema, ValidateAndReplayFindingsMatchIt) {
  const testing::Run v = testing::run_permitcheck({"validate", "--format", "json", example()});
  EXPECT_EQ(v.code, 1) << v.err;
  expect_valid("validate", v.out, 2);
  const testing::Run r = testing::run_permitcheck({"replay", "--format", "json", example()});
  expect_valid("replay", r.out, 2);
}

TEST_F(FindingSchema, CheckFindingsMatchIt) {
  const testing::Run c =
      testing::run_permitcheck({"check", "--ruleset", "legacy", "--cases", "300", "--format", "json"});
  EXPECT_EQ(c.code, 1) << c.err;
  expect_valid("check", c.out, 1);
}

#ifdef PERMITCHECK_REFERENCE_CLIENT
TEST_F(FindingSchema, ConformFindingsMatchIt) {
  const testing::Run c = testing::run_permitcheck(
      {"conform", "--client",
       std::string(PERMITCHECK_REFERENCE_CLIENT) +
           " --url {url} --q {q} --delay-ms {delay_ms} --nack-every {nack_every} --ruleset legacy",
       "--scenarios", "corrupt_checksum", "--cases", "0", "--idle", "0.8", "--max-shrinks", "0",
       "--reproduce", "1", "--format", "json"});
  if (c.err.find("not built in this configuration") != std::string::npos) GTEST_SKIP();
  EXPECT_EQ(c.code, 1) << c.err;
  expect_valid("conform", c.out, 1);
  // The settings the cases depend on are in the report, the defaults included.
  EXPECT_THAT(c.out, ::testing::HasSubstr(
                         R"("settings":{"seed":491,"idle_seconds":0.8,"cases":0,"q":10,)"));
}
#endif

// The matrix's cells write every report's finding object (matrix/json.cc): its golden
// matrix.json, the one tests/matrix/render_test.cc produces from the code, has two.
TEST_F(FindingSchema, MatrixFindingsMatchIt) {
  const std::string golden = testing::source_dir() + "/tests/matrix/golden/matrix.json";
  expect_valid("matrix", testing::read_file(golden), 2);
}

TEST_F(FindingSchema, RefusesAFindingWithoutItsRule) {
  const std::string bad =
      R"({"findings":[{"line":3,"text":"x","message":"line 3: x"}]})";
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("permitcheck-schema-bad-" + std::to_string(::getpid())))
                               .string();
  testing::write_file(path, bad);
  const Ran r = shell("python3 " + testing::source_dir() + "/tests/cli/schema/check_findings.py " +
                      schema() + " " + path);
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr("'rule' is a required property"));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace permitcheck::cli
