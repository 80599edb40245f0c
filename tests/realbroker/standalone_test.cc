// The installed Pulsar standalone broker, really started (skipped, saying why, when
// ci/install-pulsar-broker.sh has not run): start, ready, a shipped client judged through the
// tap with the broker's stats matching the wire, stop, and nothing left running or listening.
#include "realbroker/standalone.h"

#include <signal.h>

#include <cstdlib>
#include <filesystem>

#include "gtest/gtest.h"
#include "realbroker/run.h"
#include "tests/realbroker/realbroker_testing.h"

namespace permitcheck::realbroker {
namespace {

std::string root() { return testing::source_root(); }
bool listening(std::uint16_t port) { return testing::port_listening(port); }

TEST(RealBrokerStandalone, StartsServesAGoClientAndLeavesNothingRunning) {
  if (!installed_classpath(root()).ok()) {
    GTEST_SKIP() << "the Pulsar broker is not installed (run ci/install-pulsar-broker.sh)";
  }
  absl::StatusOr<std::uint16_t> tap_port = free_loopback_port();
  ASSERT_TRUE(tap_port.ok());
  StandaloneBroker broker(StandaloneOptions{
      .root = root(), .advertised = "127.0.0.1:" + std::to_string(*tap_port)});
  ASSERT_TRUE(broker.start(std::chrono::seconds(150)).ok()) << broker.log_tail(2000);
  const pid_t pid = broker.pid();
  const BrokerEndpoint e = broker.endpoint();
  EXPECT_TRUE(broker.admin().ready());
  const std::string go = root() + "/clients/go/permitcheck-go-consumer";
  if (std::filesystem::exists(go)) {
    StandaloneControl control(&broker);
    RealBrokerOutcome o = run_on_real_broker(
        control, RealBrokerRun{.client_command = root() + "/clients/go/run {url} "
                                                          "{topic} {subscription} {q} 0 0",
                               .q = 10, .t = 5, .scenario = "batches",
                               .tap_port = *tap_port});
    EXPECT_EQ(o.verdict, "PASS") << (o.findings.empty() ? "" : o.findings[0])
                                 << (o.notes.empty() ? "" : o.notes[0]);
    ASSERT_FALSE(o.comparisons.empty());
    EXPECT_TRUE(o.comparisons[0].matches());
  }
  broker.stop();
  EXPECT_NE(::kill(-pid, 0), 0) << "the broker's process group is still alive";
  EXPECT_FALSE(listening(e.service_port));
  EXPECT_FALSE(listening(e.admin.port));
}

}  // namespace
}  // namespace permitcheck::realbroker
