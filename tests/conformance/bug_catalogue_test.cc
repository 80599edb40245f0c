// The bug catalogue (conformance/bug_catalogue.h): its rows name installed releases of shipped
// presets, and each row holds end to end (found in the affected release, passing in the fixed
// one). The end-to-end tests skip when that release is not installed, and in sanitizer builds.
#include "conformance/bug_catalogue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"

#include "conformance/client_presets.h"
#include "tests/conformance/catalogue_testing.h"
#include "tests/conformance/official_client.h"

namespace permitcheck::conformance {
namespace {

using testing::row;

TEST(BugCatalogue, EveryRowNamesReleasesItsPresetInstalls) {
  std::set<std::string> ids;
  for (const BugRow& row : bug_catalogue()) {
    EXPECT_TRUE(ids.insert(row.id).second) << "duplicate row " << row.id;
    EXPECT_FALSE(row.rules.empty()) << row.id;
    EXPECT_NE(row.affected, row.fixed) << row.id;
    EXPECT_TRUE(resolve_preset(row.client + "@" + row.affected, "/src").ok()) << row.id;
    EXPECT_TRUE(resolve_preset(row.client + "@" + row.fixed, "/src").ok()) << row.id;
  }
}

// A release whose client was started again is judged on the start that subscribed, and the
// report says which attempts did not, in text and JSON.
TEST(BugCatalogue, RestartedReleaseNamesItsFailedStarts) {
  RowResult r{.row = &row("go-1404")};
  r.affected = VersionRun{.version = "v0.16.0", .client_started = true, .rules = {"E5"},
                          .numbers = "debited 1, granted 0, available -1",
                          .failed_starts = {"attempt 1: hang or start failure: no Subscribe "
                                            "and Flow within 10000 ms (still running)"}};
  r.fixed = VersionRun{.version = "v0.17.0", .client_started = true};
  const std::string text = format_catalogue_text({r});
  EXPECT_NE(text.find("\n    started again after attempt 1: hang or start failure: no Subscribe"
                      " and Flow within 10000 ms (still running)\n  fixed    v0.17.0"),
            std::string::npos)
      << text;
  const std::string json = format_catalogue_json({r});
  EXPECT_NE(json.find("\"failed_starts\": [\"attempt 1: hang or start failure"), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"failed_starts\": [], \"seconds\""), std::string::npos) << json;
}

TEST(BugCatalogue, E5_Go833DiscardedCorruptMessagesLeakPermitsInV090NotInV0100) {
  if (!testing::installed("clients/go/permitcheck-go-consumer-v0.9.0") ||
      !testing::installed("clients/go/permitcheck-go-consumer-v0.10.0")) {
    GTEST_SKIP() << "Go client v0.9.0 / v0.10.0 not built (ci/install-go-client.sh) or sanitized";
  }
  const std::vector<BugRow>& rows = bug_catalogue();
  auto it = std::find_if(rows.begin(), rows.end(), [](const BugRow& r) { return r.id == "go-833"; });
  ASSERT_NE(it, rows.end());
  const RowResult r = run_bug_row(*it, PERMITCHECK_SOURCE_DIR);
  EXPECT_TRUE(r.holds()) << format_catalogue_text({r});
  // Five corrupt singles, P = 1 each: v0.9.0 returns none of the 5, v0.10.0 returns all 5.
  EXPECT_EQ(r.affected.rules, std::vector<std::string>{"E5"}) << format_catalogue_text({r});
  EXPECT_EQ(r.affected.numbers, "debited 5, granted 10, available 5");
  EXPECT_EQ(r.fixed.numbers, "debited 5, granted 15, available 10");
}


// Empty when java runs and both releases' consumers are built (ci/install-java-client.sh).
std::string java_missing(const std::vector<std::string>& versions) {
  if (std::system("java -version >/dev/null 2>&1") != 0) return "no java runtime on the PATH";
  for (const std::string& v : versions) {
    const std::string jar = absl::StrCat("clients/java/target-", v, "/consumer.jar");
    if (!testing::installed(jar)) return absl::StrCat(jar, " not built (ci/install-java-client.sh) or sanitized");
  }
  return "";
}

TEST(BugCatalogue, E2_E5_Java22091PartialRedeliveryOverGrantsIn320NotIn321) {
  if (std::string why = java_missing({"3.2.0", "3.2.1"}); !why.empty()) GTEST_SKIP() << why;
  const RowResult r = run_bug_row(row("java-22091"), PERMITCHECK_SOURCE_DIR);
  EXPECT_TRUE(r.holds()) << format_catalogue_text({r});
  // B = 2 with 1 acknowledged, B = 3 with 2 acknowledged (P = 1 each): 3.2.0 returns 5 for
  // the 2 debited (over-grant 3), 3.2.1 exactly 2 (its Flow waits for T = 5).
  EXPECT_EQ(r.affected.rules, (std::vector<std::string>{"E2", "E5"})) << format_catalogue_text({r});
  EXPECT_EQ(r.affected.numbers, "debited 2, granted 15, available 13");
  EXPECT_EQ(r.fixed.numbers, "debited 2, granted 10, available 8");
}

// A duplicate-redelivery row: the affected release stalls with nothing available, the fixed
// one is back at Q = 10 (the exact debits can shift by a round with the client's ack flush).
void expect_stalled_then_back_at_q(const RowResult& r) {
  EXPECT_EQ(r.affected.numbers.substr(r.affected.numbers.find("available")), "available 0")
      << format_catalogue_text({r});
  EXPECT_EQ(r.fixed.numbers.substr(r.fixed.numbers.find("available")), "available 10")
      << format_catalogue_text({r});
}

TEST(BugCatalogue, E5_E6_Go1180DroppedDuplicatesReturnNoPermitInV0120NotInV0121) {
  if (!testing::installed("clients/go/permitcheck-go-consumer-v0.12.0") ||
      !testing::installed("clients/go/permitcheck-go-consumer-v0.12.1")) {
    GTEST_SKIP() << "Go client v0.12.0 / v0.12.1 not built (ci/install-go-client.sh) or sanitized";
  }
  const RowResult r = run_bug_row(row("go-1180"), PERMITCHECK_SOURCE_DIR);
  EXPECT_TRUE(r.holds()) << format_catalogue_text({r});
  // Each round's b5 goes out again 20 ms after the client's Flow for it: v0.12.0 drops the 5
  // duplicates (its ack of them is still grouped) without returning them, and stalls with
  // nothing available; v0.12.1 returns them and is back at Q.
  EXPECT_EQ(r.affected.rules, (std::vector<std::string>{"E5", "E6"})) << format_catalogue_text({r});
  expect_stalled_then_back_at_q(r);
}

TEST(BugCatalogue, E5_E6_Java3787DroppedDuplicatesReturnNoPermitIn230NotIn231) {
  if (std::string why = java_missing({"2.3.0", "2.3.1"}); !why.empty()) GTEST_SKIP() << why;
  const RowResult r = run_bug_row(row("java-3787"), PERMITCHECK_SOURCE_DIR);
  EXPECT_TRUE(r.holds()) << format_catalogue_text({r});
  // As go-1180: 2.3.0 drops each duplicate b5 whose ack is still grouped and stalls with
  // nothing available; 2.3.1 returns them and is back at Q.
  EXPECT_EQ(r.affected.rules, (std::vector<std::string>{"E5", "E6"})) << format_catalogue_text({r});
  expect_stalled_then_back_at_q(r);
}

}  // namespace
}  // namespace permitcheck::conformance
