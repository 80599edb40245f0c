// The official clients on a real Pulsar 4.2.4 standalone broker, one broker started by this
// binary's own environment and shared by its tests (the binary is one ctest test,
// RealBrokerClients): the C++ client's known partial-redelivery over-return shown on the real
// broker (E2 on the wire, the broker's own availablePermits above Q), the Java release with the
// fix of the same bug passing the same scenario, the newest Java release passing the close and
// reopen on a pooled connection and a Failover subscription, and nothing left running or
// listening afterwards. Each test skips, saying why, when the broker or the client is not
// installed.
#include <dirent.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "conformance/client_presets.h"
#include "gtest/gtest.h"
#include "realbroker/run.h"
#include "tests/realbroker/realbroker_testing.h"
#include "realbroker/standalone.h"

namespace permitcheck::realbroker {
namespace {

std::string root() { return testing::source_root(); }
bool listening(std::uint16_t port) { return testing::port_listening(port); }

// Processes whose command line names a topic of this test process (the run's topics are
// "permitcheck-SCENARIO-PID-..."): a client left running.
std::vector<std::string> clients_left() {
  std::vector<std::string> left;
  const std::string mark = "-" + std::to_string(::getpid()) + "-";
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    const std::string cmd((std::istreambuf_iterator<char>(in)), {});
    if (cmd.find("permitcheck-") != std::string::npos && cmd.find(mark) != std::string::npos) {
      left.push_back(name);
    }
  }
  return left;
}

class SharedBroker : public ::testing::Environment {
 public:
  void SetUp() override {
    if (!installed_classpath(root()).ok()) return;  // each test skips
    absl::StatusOr<std::uint16_t> port = free_loopback_port();
    ASSERT_TRUE(port.ok());
    tap_port = *port;
    broker = std::make_unique<StandaloneBroker>(StandaloneOptions{
        .root = root(), .advertised = "127.0.0.1:" + std::to_string(tap_port)});
    if (absl::Status s = broker->start(std::chrono::seconds(150)); !s.ok()) {
      ADD_FAILURE() << "the standalone did not start: " << s.message() << "\n"
                    << broker->log_tail(2000);
      broker.reset();
      return;
    }
    pid = broker->pid();
    endpoint = broker->endpoint();
  }
  void TearDown() override {
    if (!broker) return;
    broker->stop();
    broker.reset();
    EXPECT_NE(::kill(-pid, 0), 0) << "the broker's process group is still alive";
    EXPECT_FALSE(listening(endpoint.service_port)) << "the broker's port";
    EXPECT_FALSE(listening(endpoint.admin.port)) << "the admin port";
    EXPECT_FALSE(listening(tap_port)) << "the tap's port";
    EXPECT_EQ(clients_left(), std::vector<std::string>{}) << "client processes left running";
  }

  std::unique_ptr<StandaloneBroker> broker;
  std::uint16_t tap_port = 0;
  pid_t pid = 0;
  BrokerEndpoint endpoint;
};

SharedBroker* shared = nullptr;

// The preset's run on the shared broker, or nullopt (the test skips) when not installed.
std::optional<RealBrokerOutcome> run(const std::string& preset, const std::string& scenario,
                                     const std::string& installed) {
  if (!shared->broker) return std::nullopt;
  if (!std::filesystem::exists(root() + "/clients/" + installed)) {
    return std::nullopt;
  }
  absl::StatusOr<conformance::ResolvedPreset> p =
      conformance::resolve_preset(preset, conformance::presets_root());
  if (!p.ok()) return std::nullopt;
  StandaloneControl control(shared->broker.get());
  return run_on_real_broker(control, RealBrokerRun{.client_command = p->command + " {sub_type}",
                                                   .client_name = preset,
                                                   .q = 10,
                                                   .t = p->preset->threshold(10),
                                                   .scenario = scenario,
                                                   .tap_port = shared->tap_port,
                                                   .timeout = std::chrono::seconds(60)});
}

std::string describe(const RealBrokerOutcome& o) {
  std::string s = o.verdict + " rules";
  for (const std::string& r : o.rules) s += " " + r;
  for (const std::string& n : o.notes) s += "\nnote: " + n;
  if (!o.findings.empty()) s += "\nfinding: " + o.findings[0];
  return s + "\nclient log: " + o.client_log_tail;
}

TEST(RealBrokerClients, E2_Cpp420PartialRedeliveryOverReturnsAboveQInTheBrokersStats) {
  std::optional<RealBrokerOutcome> o = run("cpp", "partial_redelivery", "cpp/.venv/bin/python");
  if (!o) GTEST_SKIP() << "the broker or the C++ client (PyPI pulsar-client) is not installed";
  EXPECT_EQ(o->verdict, "FAIL") << describe(*o);
  EXPECT_NE(std::find(o->rules.begin(), o->rules.end(), "E2"), o->rules.end()) << describe(*o);
  // The broker itself was granted more than the receiver queue: its stats above Q = 10, and
  // equal to the wire's balance (the broker follows the Flows; the client over-returned).
  EXPECT_TRUE(o->broker_above_q()) << o->broker_peak_available;
  ASSERT_FALSE(o->comparisons.empty());
  EXPECT_GT(o->comparisons.back().broker_available, 10);
  EXPECT_TRUE(o->comparisons.back().matches()) << describe(*o);
}

TEST(RealBrokerClients, Java321WithTheFixPassesPartialRedelivery) {
  std::optional<RealBrokerOutcome> o =
      run("java@3.2.1", "partial_redelivery", "java/target-3.2.1/consumer.jar");
  if (!o) GTEST_SKIP() << "the broker or the Java client 3.2.1 is not installed";
  EXPECT_EQ(o->verdict, "PASS") << describe(*o);
  EXPECT_FALSE(o->broker_above_q()) << o->broker_peak_available;
  ASSERT_FALSE(o->comparisons.empty());
  EXPECT_TRUE(o->comparisons.back().matches());
}

TEST(RealBrokerClients, NewestJavaPassesReopenOnAPooledConnection) {
  std::optional<RealBrokerOutcome> o = run("java", "reopen", "java/target/consumer.jar");
  if (!o) GTEST_SKIP() << "the broker or the Java client is not installed";
  EXPECT_EQ(o->verdict, "PASS") << describe(*o);
  EXPECT_GE(o->consumers, 2u);
  ASSERT_FALSE(o->comparisons.empty());
  EXPECT_EQ(o->comparisons.back().broker_consumers, 1);
  EXPECT_EQ(o->comparisons.back().broker_unacked, 0);
}

// Measured on Pulsar 4.2.4 (docs/real-broker.md, "B12 on Exclusive, Failover and Key_Shared"):
// on a Failover subscription the broker reads as many entries as the consumer has permits and
// writes them in one send (PersistentDispatcherSingleActiveConsumer.java:453, :245), so frames
// 2-6 arrive at available 0 to -40 right after frame 1, sent at 10. That send began positive:
// no B12, each later frame is known deviation X7; the client's side is clean and the stats
// match the wire.
TEST(RealBrokerClients, X7_PulsarWritesAFailoverReadAsOneSendAndTheGoClientIsClean) {
  std::optional<RealBrokerOutcome> o = run("go", "failover", "go/permitcheck-go-consumer");
  if (!o) GTEST_SKIP() << "the broker or the Go client is not installed";
  EXPECT_EQ(o->sub_type, "Failover");
  EXPECT_EQ(o->verdict, "PASS") << describe(*o);
  EXPECT_TRUE(o->rules.empty()) << describe(*o);
  ASSERT_FALSE(o->deviations.empty()) << describe(*o);
  for (const std::string& d : o->deviations) {
    EXPECT_EQ(d.rfind("line ", 0), 0u) << d;
    EXPECT_NE(d.find("X7"), std::string::npos) << d;
    EXPECT_NE(d.find("B12 is not decided"), std::string::npos) << d;
  }
  ASSERT_FALSE(o->comparisons.empty());
  EXPECT_TRUE(o->comparisons.back().matches()) << describe(*o);
  EXPECT_FALSE(o->broker_above_q());
}

// docs/findings/rust-active-consumer-change-counted-as-message.md on the real broker: Pulsar
// tells a Failover consumer it is active (AbstractDispatcherSingleActiveConsumer.java:91-95 in
// 4.2.4), the crate counts that notification as a message, and its Flows give back one permit
// the broker never took: the broker's own availablePermits end at 11 for a queue of 10, as on
// the wire. On Exclusive (no notification) the same consumer ends at 10.
TEST(RealBrokerClients, E2_E5_RustCountsTheFailoverActiveConsumerNoticeAsAMessage) {
  std::optional<RealBrokerOutcome> o = run("rust", "failover", "rust/permitcheck-rust-consumer");
  if (!o) GTEST_SKIP() << "the broker or the Rust client is not installed";
  EXPECT_EQ(o->sub_type, "Failover");
  EXPECT_EQ(o->verdict, "FAIL") << describe(*o);
  EXPECT_EQ(o->rules, (std::vector<std::string>{"E2", "E5"})) << describe(*o);
  ASSERT_FALSE(o->comparisons.empty());
  EXPECT_EQ(o->comparisons.back().broker_available, 11) << describe(*o);
  EXPECT_TRUE(o->comparisons.back().matches()) << describe(*o);
  std::optional<RealBrokerOutcome> exclusive =
      run("rust", "exclusive", "rust/permitcheck-rust-consumer");
  ASSERT_TRUE(exclusive.has_value());
  EXPECT_EQ(exclusive->verdict, "PASS") << describe(*exclusive);
  ASSERT_FALSE(exclusive->comparisons.empty());
  EXPECT_EQ(exclusive->comparisons.back().broker_available, 10);
}

}  // namespace
}  // namespace permitcheck::realbroker

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  permitcheck::realbroker::shared = new permitcheck::realbroker::SharedBroker;
  ::testing::AddGlobalTestEnvironment(permitcheck::realbroker::shared);
  return RUN_ALL_TESTS();
}
