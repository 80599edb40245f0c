// `conform --list` and `--list-clients` honour --format: JSON a program can read (issue 35: it
// printed the text table whatever --format said), JUnit refused with exit 2.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/cli/cli_testing.h"

namespace permitcheck::cli {
namespace {

using ::testing::HasSubstr;

TEST(ConformList, ScenariosAsJsonWithFormatJson) {
  const testing::Run r = testing::run_permitcheck({"conform", "--list", "--format", "json"});
  if (r.err.find("not built in this configuration") != std::string::npos) GTEST_SKIP();
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["scenarios"].is_array());
  bool found = false;
  for (const nlohmann::json& s : j["scenarios"]) {
    if (s["name"] == "corrupt_checksum") {
      found = true;
      EXPECT_EQ(s["rule"], "C7");
      EXPECT_EQ(s["legacy_rows"], nlohmann::json::array({"L1"}));
    }
  }
  EXPECT_TRUE(found) << r.out;
  EXPECT_FALSE(j["unobservable_rows"].empty());
}

TEST(ConformList, ClientPresetsAsJsonWithTheirThresholdAtQ) {
  const testing::Run r =
      testing::run_permitcheck({"conform", "--list-clients", "--format", "json", "--q", "20"});
  if (r.err.find("not built in this configuration") != std::string::npos) GTEST_SKIP();
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  bool found = false;
  for (const nlohmann::json& p : j) {
    if (p["name"] == "go") {
      found = true;
      EXPECT_EQ(p["q"], 20);
      EXPECT_EQ(p["threshold"], 10);
      EXPECT_EQ(p["knows_message_permits"], false);
    }
  }
  EXPECT_TRUE(found) << r.out;
}

TEST(ConformList, JunitIsRefused) {
  const testing::Run r = testing::run_permitcheck({"conform", "--list", "--format", "junit"});
  if (r.err.find("not built in this configuration") != std::string::npos) GTEST_SKIP();
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("not junit"));
}

}  // namespace
}  // namespace permitcheck::cli
