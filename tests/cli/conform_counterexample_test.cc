// One oracle (issue 33): the counterexample `conform --trace-dir` saves holds the facts conform
// saw beside the wire (a client's exit, `x-client-exit`, spec/client_exit.h; a consumer closed
// for good, a malformed frame, the drain and the windows, spec/scenario_facts.h), so
// `permitcheck validate` of the file reports conform's findings: same rules, same lines. A
// correct client's run of the same scenario fails nothing and saves no counterexample, and its
// trace validates clean.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#ifdef PERMITCHECK_REFERENCE_CLIENT
#include "conformance/scenario.h"
#include "trace/writer.h"
#endif
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_testing.h"
#include "spec/outcome.h"

namespace permitcheck::cli {
namespace {

using ::testing::HasSubstr;

#ifdef PERMITCHECK_REFERENCE_CLIENT
namespace fs = std::filesystem;

std::string exit_test_client(const std::string& extra) {
  return std::string(PERMITCHECK_REFERENCE_CLIENT) +
         " --url {url} --q {q} --delay-ms {delay_ms} --nack-every {nack_every}" + extra;
}

testing::Run conform_corrupt_checksum(const std::string& client, const fs::path& dir) {
  return testing::run_permitcheck({"conform", "--client", client, "--scenarios", "corrupt_checksum",
                                   "--cases", "0", "--idle", "0.8", "--max-shrinks", "2",
                                   "--jobs", "1", "--reproduce", "1", "--trace-dir", dir.string()});
}

fs::path exit_test_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  return dir;
}

// The "line N: RULE text" findings of a report, in order.
std::vector<std::string> finding_lines(const std::string& out) {
  static const std::regex kLine(R"((^|\n) *(line \d+: [A-Z][A-Z0-9]* [^\n]*))");
  std::vector<std::string> v;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), kLine);
       it != std::sregex_iterator(); ++it) {
    v.push_back((*it)[2]);
  }
  return v;
}

TEST(ConformCounterexample, C7_AClientThatExitsMidScenarioSavesATraceThatValidateFailsTheSameWay) {
  const fs::path dir = exit_test_dir("conform_cex_exit");
  const testing::Run r =
      conform_corrupt_checksum(exit_test_client(" --mutant exit-on-checksum"), dir);
  if (r.err.find("not built in this configuration") != std::string::npos) GTEST_SKIP();
  ASSERT_EQ(r.code, spec::kExitViolation) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("client: crashed: exited with status 3"));
  // conform's findings of the minimal counterexample (its report prints them under "findings:").
  const std::size_t at = r.out.find("findings:\n");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::vector<std::string> conform_found =
      finding_lines(r.out.substr(at, r.out.find("\n\n", at) - at));
  ASSERT_EQ(conform_found.size(), 1u) << r.out;
  EXPECT_THAT(conform_found[0], HasSubstr(": C7 client crashed: exited with status 3 during "
                                          "corrupt_checksum"));

  const fs::path cex = dir / "corrupt_checksum.jsonl";
  ASSERT_TRUE(fs::exists(cex)) << r.out << r.err;
  const testing::Run v = testing::run_permitcheck({"validate", cex.string()});
  EXPECT_EQ(v.code, spec::kExitViolation) << v.out << v.err;
  // validate's report (after the trace's own "# violation" comment lines) names the same findings.
  const std::size_t vat = v.out.find("violations");
  ASSERT_NE(vat, std::string::npos) << v.out;
  EXPECT_EQ(finding_lines(v.out.substr(vat)), conform_found) << r.out << v.out;
  fs::remove_all(dir);
}

// A client that exits with status 0 (no reconnect logic) takes its consumer with it: the same
// fact, under the scenario's rule, reproduced by validate.
TEST(ConformCounterexample, C7_AClientThatExitsWithStatusZeroIsTheSameFactInTheSavedTrace) {
  const fs::path dir = exit_test_dir("conform_cex_exit0");
  const testing::Run r = conform_corrupt_checksum(
      exit_test_client(" --mutant exit-on-checksum; exit 0"), dir);
  if (r.err.find("not built in this configuration") != std::string::npos) GTEST_SKIP();
  ASSERT_EQ(r.code, spec::kExitViolation) << r.out << r.err;
  const std::size_t at = r.out.find("findings:\n");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::vector<std::string> conform_found =
      finding_lines(r.out.substr(at, r.out.find("\n\n", at) - at));
  ASSERT_EQ(conform_found.size(), 1u) << r.out;
  EXPECT_THAT(conform_found[0], HasSubstr(": C7 client exited with status 0 during "
                                          "corrupt_checksum"));
  const testing::Run v =
      testing::run_permitcheck({"validate", (dir / "corrupt_checksum.jsonl").string()});
  EXPECT_EQ(v.code, spec::kExitViolation) << v.out << v.err;
  const std::size_t vat = v.out.find("violations");
  ASSERT_NE(vat, std::string::npos) << v.out;
  EXPECT_EQ(finding_lines(v.out.substr(vat)), conform_found) << r.out << v.out;
  fs::remove_all(dir);
}

// conform's findings of its minimal counterexample (its report's "findings:" lines) are what
// `validate` of the saved trace reports, in order, line for line.
void expect_validate_reproduces(const testing::Run& r, const fs::path& cex) {
  const std::size_t at = r.out.find("findings:\n");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::vector<std::string> conform_found =
      finding_lines(r.out.substr(at, r.out.find("\n\n", at) - at));
  ASSERT_FALSE(conform_found.empty()) << r.out;
  ASSERT_TRUE(fs::exists(cex)) << r.out << r.err;
  const testing::Run v = testing::run_permitcheck({"validate", cex.string()});
  EXPECT_EQ(v.code, spec::kExitViolation) << v.out << v.err;
  const std::size_t vat = v.out.find("violations");
  ASSERT_NE(vat, std::string::npos) << v.out;
  EXPECT_EQ(finding_lines(v.out.substr(vat)), conform_found) << r.out << v.out;
}

// conform of corrupt_checksum with the reference client and `client_args` fails with a finding
// containing `expected`, and validate of the saved trace reports the same findings. Skipped
// where the client's mutants are not built. The last statement of its test (it may return early).
void expect_corrupt_checksum_cex_reproduces(const std::string& dir_name,
                                            const std::string& client_args,
                                            const std::string& expected) {
  const fs::path dir = exit_test_dir(dir_name);
  const testing::Run r = conform_corrupt_checksum(exit_test_client(client_args), dir);
  if (r.err.find("not built in this configuration") != std::string::npos) GTEST_SKIP();
  ASSERT_EQ(r.code, spec::kExitViolation) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr(expected));
  expect_validate_reproduces(r, dir / "corrupt_checksum.jsonl");
  fs::remove_all(dir);
}

// A client that closes its consumer and stays (no subscribed consumer at the end): the fact is
// in the saved trace (x-no-subscribed-consumer), and validate reports it at the same line.
TEST(ConformCounterexample, C7_AConsumerClosedForGoodIsTheSameFactInTheSavedTrace) {
  expect_corrupt_checksum_cex_reproduces("conform_cex_closed", " --mutant close-on-checksum",
                                         "C7 at quiescence the client has no subscribed consumer");
}

// A client that writes a frame the broker cannot read: x-malformed-frame, the same line.
TEST(ConformCounterexample, C7_AMalformedFrameIsTheSameFactInTheSavedTrace) {
  expect_corrupt_checksum_cex_reproduces("conform_cex_garbage", " --mutant garbage-on-checksum",
                                         "C7 client sent a malformed frame");
}

// The legacy client (L1): the drain's shortfall and the window are facts of the saved trace,
// so validate names the same row under the same rule at the x-drain line.
TEST(ConformCounterexample, L1_C7_TheDrainsFindingIsTheSameInTheSavedTrace) {
  expect_corrupt_checksum_cex_reproduces("conform_cex_legacy", " --ruleset legacy", ": C7 L1: ");
}

// The reference client counting ACTIVE_CONSUMER_CHANGE as a message: the drain's surplus (E2).
TEST(ConformCounterexample, E2_TheDrainsSurplusIsTheSameInTheSavedTrace) {
  const fs::path dir = exit_test_dir("conform_cex_surplus");
  const testing::Run r = testing::run_permitcheck(
      {"conform", "--client", exit_test_client(" --mutant non-message-permit"), "--scenarios",
       "active_consumer_change", "--cases", "0", "--idle", "0.8", "--max-shrinks", "2",
       "--jobs", "1", "--reproduce", "1", "--trace-dir", dir.string()});
  if (r.err.find("not built in this configuration") != std::string::npos) GTEST_SKIP();
  ASSERT_EQ(r.code, spec::kExitViolation) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr(": E2 the client returned"));
  expect_validate_reproduces(r, dir / "active_consumer_change.jsonl");
  fs::remove_all(dir);
}

// The same scenario and entry, the client correct: nothing failed, no counterexample saved, and
// the trace conform judged (no exit fact in it) validates clean.
TEST(ConformCounterexample, ACorrectClientsTraceOfTheScenarioValidatesClean) {
  const fs::path dir = exit_test_dir("conform_cex_correct");
  const testing::Run r = conform_corrupt_checksum(exit_test_client(""), dir);
  if (r.err.find("not built in this configuration") != std::string::npos) GTEST_SKIP();
  EXPECT_EQ(r.code, spec::kExitPass) << r.out << r.err;
  EXPECT_FALSE(fs::exists(dir / "corrupt_checksum.jsonl"));

  using conformance::EntrySpec;
  const conformance::ClientSpec client{.command = exit_test_client(""),
                                       .idle = std::chrono::milliseconds(800)};
  const EntrySpec corrupt{.batch_size = 3, .batched = true,
                          .fault = conformance::EntryFault::kChecksum};
  const conformance::ScenarioOutcome o = conformance::run_scenario(
      client, {.kind = conformance::ScenarioKind::kCorruptChecksum, .entries = {corrupt}});
  ASSERT_TRUE(o.violations.empty()) << o.violations.front().explanation;
  fs::create_directories(dir);
  const fs::path trace = dir / "correct.jsonl";
  {
    std::ofstream out(trace);
    ASSERT_TRUE(trace::write_trace(out, o.header, o.events).ok());
  }
  const testing::Run v = testing::run_permitcheck({"validate", trace.string()});
  EXPECT_EQ(v.code, spec::kExitPass) << v.out << v.err;
  EXPECT_THAT(v.out, HasSubstr("verdict: PASS")) << v.out;
  fs::remove_all(dir);
}
#endif

}  // namespace
}  // namespace permitcheck::cli
