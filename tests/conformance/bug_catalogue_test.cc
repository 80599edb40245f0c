// The bug catalogue (conformance/bug_catalogue.h): its rows name installed releases of shipped
// presets, and each row holds end to end (found in the affected release, passing in the fixed
// one). The end-to-end tests skip when that release is not installed, and in sanitizer builds.
#include "conformance/bug_catalogue.h"

#include <gtest/gtest.h>

#include <set>

#include "conformance/client_presets.h"
#include "tests/conformance/official_client.h"

namespace permitcheck::conformance {
namespace {

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

TEST(BugCatalogue, E5_Go833DiscardedCorruptMessagesLeakPermitsInV090NotInV0100) {
  if (!testing::installed("conformance/clients/go/permitcheck-go-consumer-v0.9.0") ||
      !testing::installed("conformance/clients/go/permitcheck-go-consumer-v0.10.0")) {
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

}  // namespace
}  // namespace permitcheck::conformance
