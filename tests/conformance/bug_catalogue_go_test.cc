// The Go zero-queue row of the bug catalogue (docs/bug-catalogue.md, "Go", go-1404) and the
// mode of the shipped Go consumer it needs (clients/go/main.go,
// PERMITCHECK_GO_MODE). Each end-to-end test skips, saying why, when the releases it runs are
// not built (ci/install-go-client.sh) and in sanitizer builds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sys/wait.h>

#include "absl/strings/str_cat.h"
#include "conformance/bug_catalogue.h"
#include "conformance/client_presets.h"
#include "tests/conformance/catalogue_testing.h"
#include "tests/conformance/official_client.h"

namespace permitcheck::conformance {
namespace {

using namespace testing;  // NOLINT: the shared helpers of these tests



TEST(BugCatalogueGo, Go1404RowRunsTheZeroQueueModeAtQOneOnInstalledReleases) {
  const BugRow& r = row("go-1404");
  EXPECT_EQ(r.affected, "v0.16.0");
  EXPECT_EQ(r.fixed, "v0.17.0");
  expect_zero_queue_row(r, "go", "PERMITCHECK_GO_MODE=zero-queue");
}

TEST(BugCatalogueGo, E5_E6_Go1404ZeroQueueStallsAfterCloseInV0160NotInV0170) {
  if (!installed("clients/go/permitcheck-go-consumer-v0.16.0") ||
      !installed("clients/go/permitcheck-go-consumer-v0.17.0")) {
    GTEST_SKIP() << "Go client v0.16.0 / v0.17.0 not built (ci/install-go-client.sh) "
                    "or this is a sanitizer build";
  }
  const RowResult r = run_bug_row(row("go-1404"), PERMITCHECK_SOURCE_DIR);
  EXPECT_TRUE(r.holds()) << format_catalogue_text({r});
  // v0.16.0: the replacement's only Flow is the reconnect's initial one for 0 permits, which
  // the client refuses to send; Receive() waits: E5 (a permit unreturned at quiescence) and
  // E6 (stalled with a backlog).
  EXPECT_EQ(r.affected.rules, (std::vector<std::string>{"E5", "E6"}))
      << format_catalogue_text({r});
  EXPECT_EQ(r.affected.numbers, "debited 0, granted 0, available 0");
  // v0.17.0: the reconnect adds the waiting Receive()'s permit (Flow 1), then 1 per message.
  EXPECT_EQ(r.fixed.numbers, "debited 2, granted 3, available 1") << format_catalogue_text({r});
}

TEST(GoConsumerModes, AnUnknownModeAndZeroQueueOnAReleaseWithoutItAreUsageErrors) {
  if (!installed("clients/go/permitcheck-go-consumer") ||
      !installed("clients/go/permitcheck-go-consumer-v0.9.0")) {
    GTEST_SKIP() << "Go client v0.21.0 / v0.9.0 not built (ci/install-go-client.sh) "
                    "or this is a sanitizer build";
  }
  const std::string args = "pulsar://127.0.0.1:1 persistent://public/default/t sub 1 0 0";
  EXPECT_EQ(consumer_exit_status("go", "PERMITCHECK_GO_MODE=bogus", args), 2);
  // v0.9.0 predates ConsumerOptions.EnableZeroQueueConsumer (v0.13.0).
  EXPECT_EQ(consumer_exit_status("go", "PERMITCHECK_CLIENT_VERSION=v0.9.0 PERMITCHECK_GO_MODE=zero-queue", args),
            2);
}

}  // namespace
}  // namespace permitcheck::conformance
