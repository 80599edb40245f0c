// The matrix's broker axis (cli/matrix_run.h): the conformance broker by default, the installed
// Pulsar standalone as `pulsar-VERSION` with a cell only for the scenarios that have a
// real-broker pair, an unknown broker refused, a broker not installed a note; and a real-broker
// run becoming a cell. The real cell itself runs in RealBrokerFidelity.* (realbroker_tests).
// Built with the real broker only (it implies the conformance runner matrix_run.cc needs).
#ifdef PERMITCHECK_HAVE_REALBROKER
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "cli/matrix_run.h"
#include "gtest/gtest.h"
#include "realbroker/run.h"
#include "tests/cli/cli_testing.h"

namespace permitcheck::cli {
namespace {

namespace fs = std::filesystem;

// A source tree with the Go preset "installed" (its run script and an empty executable, which
// the script's installed check accepts) and, when `pulsar`, the
// broker's pom and classpath: enough for the plan, nothing to run.
class FakeRoot {
 public:
  explicit FakeRoot(bool pulsar) {
    dir_ = fs::temp_directory_path() /
           ("permitcheck-broker-axis-" + std::to_string(::getpid()) + (pulsar ? "-p" : "-n"));
    fs::create_directories(dir_ / "clients/go");
    fs::copy_file(testing::source_dir() + "/clients/go/run",
                  dir_ / "clients/go/run");
    const fs::path go = dir_ / "clients/go/permitcheck-go-consumer";
    std::ofstream(go) << "";
    fs::permissions(go, fs::perms::owner_all);
    fs::create_directories(dir_ / "brokers/pulsar/target");
    std::ofstream(dir_ / "brokers/pulsar/pom.xml")
        << "<project><properties><pulsar.version>4.2.4</pulsar.version></properties></project>\n";
    if (pulsar) {
      std::ofstream(dir_ / "brokers/pulsar/target/classpath.txt")
          << "/m2/org/apache/pulsar/pulsar-broker/4.2.4/pulsar-broker-4.2.4.jar\n";
    }
  }
  ~FakeRoot() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path() const { return dir_.string(); }

 private:
  fs::path dir_;
};

MatrixSettings settings(const std::string& root, std::vector<std::string> brokers) {
  return MatrixSettings{.out_dir = "/nonexistent",
                        .clients = {"go"},
                        .scenarios = {"complete_batches", "partial_batches", "close_consumer"},
                        .root = root,
                        .brokers = std::move(brokers)};
}

TEST(MatrixBrokerAxis, TheDefaultIsTheConformanceBrokerOnly) {
  FakeRoot root(true);
  absl::StatusOr<MatrixPlan> plan = plan_matrix(settings(root.path(), {}));
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->matrix.plan.size(), 3u);
  for (const matrix::CellKey& k : plan->matrix.plan) EXPECT_EQ(k.broker, "conformance");
}

TEST(MatrixBrokerAxis, APulsarBrokerGetsACellForEachPairedScenarioOnly) {
  FakeRoot root(true);
  EXPECT_EQ(pulsar_broker_name(root.path()), "pulsar-4.2.4");
  absl::StatusOr<MatrixPlan> plan =
      plan_matrix(settings(root.path(), {"conformance", "pulsar-4.2.4"}));
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<std::string> pulsar;
  int conformance = 0;
  for (const matrix::CellKey& k : plan->matrix.plan) {
    if (k.broker == "conformance") ++conformance;
    if (k.broker == "pulsar-4.2.4") pulsar.push_back(k.scenario);
  }
  EXPECT_EQ(conformance, 3);
  // partial_batches has no real-broker pair (realbroker/fidelity.h).
  EXPECT_EQ(pulsar, (std::vector<std::string>{"complete_batches", "close_consumer"}));
  EXPECT_EQ(plan->matrix.plan.back().id(), "pulsar-4.2.4/go@v0.21.0/close_consumer");
}

TEST(MatrixBrokerAxis, AnUnknownBrokerIsRefusedAndOneNotInstalledIsANote) {
  FakeRoot installed(true);
  absl::StatusOr<MatrixPlan> bad = plan_matrix(settings(installed.path(), {"pulsar-9.9.9"}));
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(),
                                "unknown broker \"pulsar-9.9.9\" (known: conformance, pulsar-4.2.4)"))
      << bad.status();
  FakeRoot missing(false);
  absl::StatusOr<MatrixPlan> plan =
      plan_matrix(settings(missing.path(), {"conformance", "pulsar-4.2.4"}));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->matrix.plan.size(), 3u);
  ASSERT_FALSE(plan->matrix.notes.empty());
  EXPECT_TRUE(absl::StrContains(plan->matrix.notes.back(), "not installed, not run: broker "
                                                           "pulsar-4.2.4"));
}

// Installed means what the preset's run script says (PERMITCHECK_CHECK_INSTALLED=1), not a
// guess at a path: the Go consumer is installed while its binary can be run, not once it
// cannot, nor at a release that was never built; the plan's note carries the script's reason.
TEST(MatrixPlanPresets, PresetInstalledIsTheRunScriptsOwnCheck) {
  FakeRoot root(false);
  EXPECT_TRUE(preset_installed("go", "v0.21.0", true, root.path()).ok());
  const absl::Status other = preset_installed("go", "v0.12.0", false, root.path());
  EXPECT_TRUE(absl::IsNotFound(other)) << other;
  EXPECT_TRUE(absl::StrContains(other.message(), "permitcheck-go-consumer-v0.12.0 is not built "
                                                 "(run ci/install-go-client.sh)"))
      << other;
  EXPECT_TRUE(absl::IsNotFound(preset_installed("rust", "6.9.1", true, root.path())));
  fs::permissions(fs::path(root.path()) / "clients/go/permitcheck-go-consumer",
                  fs::perms::owner_read);
  const absl::Status gone = preset_installed("go", "v0.21.0", true, root.path());
  EXPECT_TRUE(absl::StrContains(gone.message(), "is not built")) << gone;
  absl::StatusOr<MatrixPlan> plan = plan_matrix(settings(root.path(), {}));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->matrix.plan.empty());
  ASSERT_FALSE(plan->matrix.notes.empty());
  EXPECT_TRUE(absl::StrContains(plan->matrix.notes.front(), "not installed, not run: go v0.21.0"))
      << plan->matrix.notes.front();
  EXPECT_TRUE(absl::StrContains(plan->matrix.notes.front(), "is not built"))
      << plan->matrix.notes.front();
}

// Every shipped run script answers the check at once, installed or saying why not.
TEST(MatrixPlanPresets, EveryShippedRunScriptAnswersTheInstalledCheck) {
  for (const char* name : {"cpp", "go", "java", "pulsar-flex", "reference", "rust"}) {
    const absl::Status s = preset_installed(name, "", true, testing::source_dir());
    EXPECT_TRUE(s.ok() || (absl::IsNotFound(s) && absl::StrContains(s.message(), "run")))
        << name << ": " << s;
  }
}

TEST(MatrixBrokerAxis, ARealBrokerRunBecomesACellWithItsRulesAndStats) {
  realbroker::RealBrokerOutcome o;
  o.verdict = "FAIL";
  o.rules = {"E2", "B4"};
  o.findings = {"E2: command 3 returned 11 permits", "B4: over-credit: broker 12, wire 10"};
  o.comparisons.push_back(realbroker::StatsComparison{.when = "after draining",
                                                      .wire_available = 10,
                                                      .broker_available = 12});
  o.seconds = 9.5;
  matrix::Cell c;
  fill_from_real_broker(c, o);
  EXPECT_EQ(c.outcome, matrix::Outcome::kFail);
  EXPECT_EQ(c.rules, (std::vector<std::string>{"B4", "E2"}));
  ASSERT_EQ(c.findings.size(), 2u);
  EXPECT_EQ(c.findings[1].rule, "B4");
  EXPECT_EQ(c.findings[1].explanation, "over-credit: broker 12, wire 10");
  EXPECT_EQ(c.reason, "E2: command 3 returned 11 permits");
  ASSERT_EQ(c.windows.size(), 1u);
  EXPECT_TRUE(absl::StrContains(c.windows[0], "availablePermits 12 (wire 10)")) << c.windows[0];
  EXPECT_DOUBLE_EQ(c.seconds, 9.5);

  realbroker::RealBrokerOutcome timed_out;
  timed_out.notes = {"timed out draining the entries"};
  matrix::Cell i;
  fill_from_real_broker(i, timed_out);
  EXPECT_EQ(i.outcome, matrix::Outcome::kIncomplete);
  EXPECT_EQ(i.reason, "timed out draining the entries");
}

}  // namespace
}  // namespace permitcheck::cli
#endif  // PERMITCHECK_HAVE_REALBROKER
