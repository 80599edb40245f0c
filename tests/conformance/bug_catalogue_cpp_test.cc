// The C++ rows of the bug catalogue (docs/bug-catalogue.md, "C++") and the modes of the shipped
// C++ consumer they need (clients/cpp/consumer.py, PERMITCHECK_CPP_MODE). Each
// end-to-end test skips, saying why, when the wheels it runs are not installed
// (ci/install-python-client.sh) and in sanitizer builds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sys/wait.h>

#include "absl/strings/str_cat.h"
#include "conformance/bug_catalogue.h"
#include "tests/conformance/catalogue_testing.h"
#include "tests/conformance/official_client.h"

namespace permitcheck::conformance {
namespace {

using namespace testing;  // NOLINT: the shared helpers of these tests



TEST(BugCatalogueCpp, Cpp473RowRunsTheZeroQueueModeAtQOneOnInstalledWheels) {
  expect_zero_queue_row(row("cpp-473"), "cpp", "PERMITCHECK_CPP_MODE=zero-queue");
}

TEST(BugCatalogueCpp, E5_E6_Cpp473ZeroQueueStallsAfterCloseInTheAffectedWheelOnly) {
  if (!installed("clients/cpp/.venv-3.6.1/bin/python") ||
      !installed("clients/cpp/.venv-3.7.0/bin/python")) {
    GTEST_SKIP() << "pulsar-client 3.6.1 / 3.7.0 not installed (ci/install-python-client.sh) "
                    "or this is a sanitizer build";
  }
  const RowResult r = run_bug_row(row("cpp-473"), PERMITCHECK_SOURCE_DIR);
  EXPECT_TRUE(r.holds()) << format_catalogue_text({r});
  // 3.6.1 (C++ 3.7.0): the replacement never Flows; its state stays at 0 with receive()
  // waiting: E5 (a permit unreturned at quiescence) and E6 (stalled).
  EXPECT_EQ(r.affected.rules, (std::vector<std::string>{"E5", "E6"}))
      << format_catalogue_text({r});
  EXPECT_EQ(r.affected.numbers, "debited 0, granted 0, available 0");
  // 3.7.0 (C++ 3.7.1): the replacement Flows 1 for the waiting receive(), then 1 per message.
  EXPECT_EQ(r.fixed.numbers, "debited 2, granted 3, available 1") << format_catalogue_text({r});
}

TEST(CppConsumerModes, AnUnknownModeAndZeroQueueWithQOtherThanOneAreUsageErrors) {
  if (!installed("clients/cpp/.venv/bin/python")) {
    GTEST_SKIP() << "the C++ client (PyPI pulsar-client) is not installed "
                    "(ci/install-python-client.sh) or this is a sanitizer build";
  }
  const std::string args = "pulsar://127.0.0.1:1 persistent://public/default/t sub";
  EXPECT_EQ(consumer_exit_status("cpp", "PERMITCHECK_CPP_MODE=bogus", args + " 10 0 0"), 2);
  EXPECT_EQ(consumer_exit_status("cpp", "PERMITCHECK_CPP_MODE=zero-queue", args + " 10 0 0"), 2);
  EXPECT_EQ(consumer_exit_status("cpp", "PERMITCHECK_CPP_MODE=zero-queue", args + " 0 0 0"), 2);
  EXPECT_EQ(consumer_exit_status("cpp", "PERMITCHECK_CPP_MODE=zero-queue-listener", args + " 10 0 0"), 2);
}

TEST(CppClient, E2_ListenerModeKeepsTheReceiveQueueBoundOnASlowConsumer) {
  if (!installed("clients/cpp/.venv/bin/python")) {
    GTEST_SKIP() << "the C++ client (PyPI pulsar-client) is not installed "
                    "(ci/install-python-client.sh) or this is a sanitizer build";
  }
  // pulsar-client-cpp#195 (a listener returns its permit on dispatch) does not reproduce
  // through the Python wheel: the permit comes back when the callback returns
  // (lib/ConsumerImpl.cc:955-959 at v4.2.0), so more than Q messages consumed slowly never
  // raise the broker's count above Q (E2) and never stall.
  ClientSpec c = preset_client("cpp");
  c.command = absl::StrCat("PERMITCHECK_CPP_MODE=listener ", c.command);
  ScenarioParams p = params(ScenarioKind::kSlowConsumer,
                            {batch(4), batch(4), batch(4), batch(4)});
  p.delay_ms = 40;
  ScenarioOutcome o = run_scenario(c, p);
  EXPECT_FALSE(o.failed()) << dump(o);
  EXPECT_FALSE(has(o.violations, spec::RuleId::kE2)) << dump(o);
  EXPECT_EQ(o.debited, 16) << dump(o);
}

}  // namespace
}  // namespace permitcheck::conformance
