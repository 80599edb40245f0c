// The fidelity table on the real broker (realbroker/fidelity.h): the installed Pulsar
// standalone started here, the official Go client run through each paired scenario on it and
// on the conformance broker, the same verdicts and rules from both, and nothing left running.
// Skipped, saying why, when the broker or the Go client is not installed.
#include <signal.h>

#include <cstdlib>
#include <filesystem>

#include "gtest/gtest.h"
#include "realbroker/fidelity.h"
#include "realbroker/standalone.h"
#include "tests/realbroker/realbroker_testing.h"

namespace permitcheck::realbroker {
namespace {

using testing::port_listening;
using testing::source_root;

TEST(RealBrokerFidelity, TheGoClientGetsTheSameVerdictsFromPulsarAndTheConformanceBroker) {
  const std::string root = source_root();
  if (!installed_classpath(root).ok()) {
    GTEST_SKIP() << "the Pulsar broker is not installed (run ci/install-pulsar-broker.sh)";
  }
  if (!std::filesystem::exists(root + "/clients/go/permitcheck-go-consumer")) {
    GTEST_SKIP() << "the Go client is not installed (clients/go/install.sh)";
  }
  absl::StatusOr<std::uint16_t> tap_port = free_loopback_port();
  ASSERT_TRUE(tap_port.ok());
  StandaloneBroker broker(
      StandaloneOptions{.root = root, .advertised = "127.0.0.1:" + std::to_string(*tap_port)});
  ASSERT_TRUE(broker.start(std::chrono::seconds(70)).ok()) << broker.log_tail(2000);
  const pid_t pid = broker.pid();
  const BrokerEndpoint e = broker.endpoint();
  StandaloneControl control(&broker);
  // The Go preset's command and threshold (T = Q / 2: conformance/client_presets.cc).
  const std::vector<FidelityRow> rows = run_fidelity(
      control, FidelityOptions{.client_command = root + "/clients/go/run {url} "
                                                        "{topic} {subscription} {q} {delay_ms} "
                                                        "{nack_every}",
                               .client_name = "go",
                               .q = 10,
                               .t = 5,
                               .scenarios = {"batches", "unload"},
                               .tap_port = *tap_port,
                               .real_broker_timeout = std::chrono::seconds(30),
                               .conformance_timeout = std::chrono::seconds(20)});
  broker.stop();
  ASSERT_EQ(rows.size(), 2u);
  for (const FidelityRow& r : rows) {
    EXPECT_TRUE(r.same) << render_fidelity_table(rows);
    EXPECT_EQ(r.real_broker.verdict, "PASS") << r.pair->real_broker << ": " << r.real_broker.detail;
  }
  EXPECT_TRUE(fidelity_holds(rows));
  EXPECT_NE(::kill(-pid, 0), 0) << "the broker's process group is still alive";
  EXPECT_FALSE(port_listening(e.service_port));
  EXPECT_FALSE(port_listening(e.admin.port));
  EXPECT_FALSE(port_listening(*tap_port)) << "the tap is still listening";
}

}  // namespace
}  // namespace permitcheck::realbroker
