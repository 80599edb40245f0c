// End-to-end tests of the conformance broker against real client processes over real sockets.
//
// ReferenceClient: the positive control (rev-d, built from spec/) passes every scenario, and
// with --ruleset legacy it is caught. PulsarFlex: each deviation established for the
// third-party JavaScript client pulsar-flex 1.1.1 is pinned by rule ID and numbers, on the
// minimal counterexample `permitcheck conform` shrank it to, so a change on either side is
// noticed. The PulsarFlex tests skip when node or the installed package is missing
// (ci/install-node-clients.sh installs it) and in sanitizer builds.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <variant>

#include "absl/strings/str_cat.h"
#include "asio.hpp"
#include "conformance/conform.h"
#include "protocol/frame.h"
#include "conformance/scenario.h"
#include "tests/conformance/official_client.h"

namespace permitcheck::conformance {
namespace {

using spec::RuleId;
using testing::batch;
using testing::details;
using testing::has;
using testing::params;
using testing::reference_client;
using testing::reference_command;

std::string pulsar_flex_dir() {
  return std::string(PERMITCHECK_SOURCE_DIR) + "/clients/pulsar-flex";
}

// pulsar-flex flows ceil(Q/2) once its count of unprocessed grants drops below ceil(Q/2), so
// with Q = 10 up to 5 permits wait client-side at quiescence: its threshold T is 6.
ClientSpec pulsar_flex_client() {
  return ClientSpec{.command = absl::StrCat("node ", pulsar_flex_dir(), "/consumer.js {url} "
                                            "{topic} {subscription} {q} {delay_ms} {nack_every}"),
                    .q = 10, .t = 6, .knows_message_permits = false,
                    .timeout = std::chrono::milliseconds(20000),
                    .idle = std::chrono::milliseconds(1500)};
}

bool pulsar_flex_available() {
#ifdef PERMITCHECK_SANITIZED_BUILD
  return false;
#else
  return std::system("node --version >/dev/null 2>&1") == 0 &&
         std::filesystem::exists(pulsar_flex_dir() + "/node_modules/pulsar-flex/package.json");
#endif
}

#define SKIP_WITHOUT_PULSAR_FLEX()                                                       \
  if (!pulsar_flex_available()) {                                                        \
    GTEST_SKIP() << "pulsar-flex not installed (ci/install-node-clients.sh) or sanitized build"; \
  }

// ---- the reference client: positive and negative control ----

// A report for a failure message.
std::string details(const ScenarioReport& s) {
  std::string out = absl::StrCat(std::string(scenario_info(s.kind).name), ":");
  for (const std::string& w : s.not_opened) absl::StrAppend(&out, " not opened: ", w, ";");
  if (s.counterexample) absl::StrAppend(&out, "\n", details(*s.counterexample));
  return out;
}

// Every scenario, its fixed cases and a fresh random draw, 20 times in a row with a new seed
// each time: no flaky verdict, and every scenario opens its window every time. Each round is
// a whole `conform` run (its scenarios side by side, each its own broker and client); the
// rounds run a few at a time, since the runs mostly wait (their windows are driven by the
// client's acknowledgements, not by how fast the machine is). The 20 rounds are four tests of
// five (seeds 1-5, 6-10, 11-15, 16-20), so shards and ctest run them side by side.
class ReferenceClientRounds : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(ReferenceClientRounds, PassesEveryScenarioFiveRunsInARow) {
#ifdef PERMITCHECK_SANITIZED_BUILD
  if (GetParam() > 0) GTEST_SKIP() << "the sanitized build runs 3 rounds, in group 0";
  constexpr std::uint64_t kRounds = 3;  // the plain build runs all 20
  constexpr int kConcurrentRounds = 1;
#else
  constexpr std::uint64_t kRounds = 5;
  constexpr int kConcurrentRounds = 3;
#endif
  const std::uint64_t first_seed = GetParam() * 5 + 1;
  std::vector<ConformReport> reports(kRounds);
  std::atomic<std::uint64_t> next{0};
  auto worker = [&] {
    for (std::uint64_t i = next++; i < kRounds; i = next++) {
      ConformOptions options{.client = reference_client(), .seed = first_seed + i, .cases = 1,
                             .max_shrink_runs = 0, .jobs = 8};
      options.client.idle = std::chrono::milliseconds(600);
      reports[i] = run_conformance(options);
    }
  };
  std::vector<std::thread> threads;
  for (int j = 1; j < kConcurrentRounds; ++j) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  for (std::uint64_t i = 0; i < kRounds; ++i) {
    const std::uint64_t seed = first_seed + i;
    const ConformReport& report = reports[i];
    ASSERT_EQ(report.scenarios.size(), all_scenarios().size()) << "seed " << seed;
    for (const ScenarioReport& s : report.scenarios) {
      EXPECT_TRUE(s.passed()) << "seed " << seed << ": " << details(s);
      // The fixed cases open the window every time (a draw may not, e.g. nothing held).
      const ScenarioInfo& info = scenario_info(s.kind);
      if (!info.rows.empty()) {
        EXPECT_FALSE(s.rows.empty()) << "seed " << seed << ": " << details(s);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FourGroupsOfFive, ReferenceClientRounds, ::testing::Values(0, 1, 2, 3));

// A client the machine keeps off the CPU (--lag-ms: 300 ms before each acknowledgement and
// before each Flow) makes its Flow due with an acknowledgement and writes it 300 ms later.
// The silences after an acknowledgement scale with how long it takes to write a Flow after its
// previous command, so neither quiescence nor the drain is judged in that gap: it passes with an exact drain. (With the drain's fixed 100 ms
// silence it was reported as returning one permit too few.)
TEST(ReferenceClient, ClientOffTheCpuBetweenAnAckAndItsFlowIsJudgedAfterTheFlow) {
  ClientSpec client = reference_client();
  client.command += " --lag-ms 300";
  client.timeout = std::chrono::milliseconds(30000);
  for (ScenarioKind kind : {ScenarioKind::kCompleteBatches, ScenarioKind::kFlowAroundClose}) {
    ScenarioParams p = params(kind, kind == ScenarioKind::kFlowAroundClose
                                        ? std::vector<EntrySpec>{}
                                        : std::vector<EntrySpec>{batch(3), EntrySpec{}});
    ScenarioOutcome o = run_scenario(client, p);
    EXPECT_FALSE(o.failed()) << details(o);
    EXPECT_TRUE(o.drain.measured) << details(o);
    EXPECT_EQ(o.drain.delta, 0) << details(o);
  }
}

// With default options `conform` finds each wire-observable legacy row in the reference
// client's legacy mode, under the row's rule, with the rulebook's numbers, shrunk.
TEST(LegacyReferenceClient,
     L1_L2_L3_L4_L5_L6_L7_L9_L11_C7_K7_E3_K4_N6_M2_EachRowFoundWithDefaults) {
  ConformOptions options{.client = reference_client("legacy")};
  ConformReport report = run_conformance(options);
  const auto found = report.rows_found();
  struct Row {
    std::string row;
    RuleId rule;
    std::string scenario;
  };
  const std::vector<Row> rows = {
      {"L1", RuleId::kC7, "corrupt_checksum"},     {"L2", RuleId::kC7, "unreadable_metadata"},
      {"L3", RuleId::kC7, "decompression_failure"}, {"L4", RuleId::kC7, "truncated_batch"},
      {"L4", RuleId::kC7, "truncation_positions"},
      {"L5", RuleId::kK7, "partial_batch_failure"}, {"L6", RuleId::kE3, "held_reconnect"},
      {"L6", RuleId::kM2, "stale_epoch"},         {"L6", RuleId::kE3, "drop_before_ack"},
      {"L7", RuleId::kE3, "held_close_consumer"},   {"L9", RuleId::kK4, "start_message_id"},
      {"L11", RuleId::kN6, "flow_around_close"}};
  for (const Row& r : rows) {
    auto it = found.find(r.row);
    ASSERT_NE(it, found.end()) << r.row << " not found";
    std::vector<std::string> expected;  // in catalogue order, as rows_found lists them
    for (const ScenarioInfo& info : all_scenarios()) {
      for (const Row& x : rows) {
        if (x.row == r.row && x.scenario == info.name) expected.emplace_back(info.name);
      }
    }
    EXPECT_EQ(it->second, expected) << r.row;
    const auto s = std::find_if(report.scenarios.begin(), report.scenarios.end(),
                                [&](const ScenarioReport& x) {
                                  return scenario_info(x.kind).name == r.scenario;
                                });
    ASSERT_NE(s, report.scenarios.end());
    ASSERT_TRUE(s->counterexample.has_value()) << r.row;
    const ScenarioOutcome& c = *s->counterexample;
    // Under the row's rule, naming the row and quoting the rulebook's numbers.
    EXPECT_TRUE(has(c.violations, r.rule, absl::StrCat(r.row, ": ")))
        << r.row << "\n" << details(c);
    EXPECT_TRUE(has(c.violations, r.rule, absl::StrCat("rulebook ", r.row, ": ")))
        << r.row << "\n" << details(c);
    // Minimal: a single entry (or none) for every window.
    EXPECT_LE(c.params.entries.size(), 1u) << r.row << "\n" << details(c);
  }
  EXPECT_FALSE(report.passed());
}

// The consumer epoch: held messages of epoch 0 cross a connection drop, the replacement's
// nack raises the epoch (REDELIVER with epoch 1), and the held ones are discarded as stale.
// rev-d returns each through the state it retained (ended: dropped), so the drain is exact.
TEST(ReferenceClient, StaleEpochDiscardsAfterAReconnectAreDropped) {
  ScenarioParams p = params(ScenarioKind::kStaleEpoch, {batch(6)});
  p.delay_ms = 120;
  p.nack_every = 3;
  ScenarioOutcome o = run_scenario(reference_client(), p);
  EXPECT_FALSE(o.failed()) << details(o);
  EXPECT_FALSE(o.inconclusive()) << details(o);
  EXPECT_GE(o.stale_discards, 3) << details(o);
  ASSERT_FALSE(o.windows.empty()) << details(o);
  EXPECT_NE(o.windows.front().find("REDELIVER with epoch 1"), std::string::npos)
      << o.windows.front();
  ASSERT_TRUE(o.drain.measured) << details(o);
  EXPECT_EQ(o.drain.delta, 0) << details(o);
  // The broker's MESSAGE commands carried the epoch: 0 before the REDELIVER, 1 after it.
  std::vector<std::int64_t> epochs;
  for (const spec::Event& e : o.events) {
    if (const auto* m = std::get_if<spec::Message>(&e); m && m->epoch) {
      if (epochs.empty() || epochs.back() != *m->epoch) epochs.push_back(*m->epoch);
    }
  }
  // (The drain's third message is nacked too: epoch 2 may follow.)
  ASSERT_GE(epochs.size(), 2u) << details(o);
  EXPECT_EQ(epochs[0], 0) << details(o);
  EXPECT_EQ(epochs[1], 1) << details(o);
}

// Legacy returns a stale-epoch discard through the current connection (L6): the units held
// across the drop reach the replacement, and the drain measures the surplus.
TEST(LegacyReferenceClient, L6_M2_StaleEpochDiscardCreditsTheReplacement) {
  ScenarioParams p = params(ScenarioKind::kStaleEpoch, {batch(6)});
  p.delay_ms = 120;
  p.nack_every = 3;
  ScenarioOutcome o = run_scenario(reference_client("legacy"), p);
  EXPECT_GE(o.stale_discards, 3) << details(o);
  EXPECT_TRUE(has(o.violations, RuleId::kM2, "L6: ")) << details(o);
  EXPECT_TRUE(has(o.violations, RuleId::kM2, "rulebook L6: ")) << details(o);
  ASSERT_TRUE(o.drain.measured) << details(o);
  EXPECT_GE(o.drain.delta, 3) << details(o);
}

// The same across CLOSE_CONSUMER on the same connection: the acknowledgements of what finished
// before the REDELIVER all reach the broker, so the count is exact (b6: the first two
// acknowledged, the third nacked, 3 stale).
TEST(ReferenceClient, StaleEpochDiscardsAcrossCloseConsumerAreDropped) {
  ScenarioParams p = params(ScenarioKind::kStaleEpoch, {batch(6)});
  p.delay_ms = 120;
  p.nack_every = 3;
  p.same_connection = true;
  ScenarioOutcome o = run_scenario(reference_client(), p);
  EXPECT_FALSE(o.failed()) << details(o);
  EXPECT_EQ(o.stale_discards, 3) << details(o);
  ASSERT_FALSE(o.windows.empty()) << details(o);
  EXPECT_NE(o.windows.front().find("CLOSE_CONSUMER on the same connection"), std::string::npos)
      << o.windows.front();
  ASSERT_TRUE(o.drain.measured) << details(o);
  EXPECT_EQ(o.drain.delta, 0) << details(o);
}

TEST(LegacyReferenceClient, L7_M2_StaleEpochAcrossCloseConsumerCreditsTheReplacement) {
  ScenarioParams p = params(ScenarioKind::kStaleEpoch, {batch(6)});
  p.delay_ms = 120;
  p.nack_every = 3;
  p.same_connection = true;
  ScenarioOutcome o = run_scenario(reference_client("legacy"), p);
  EXPECT_EQ(o.stale_discards, 3) << details(o);
  EXPECT_TRUE(has(o.violations, RuleId::kM2, "L7: ")) << details(o);
  ASSERT_TRUE(o.drain.measured) << details(o);
  EXPECT_GE(o.drain.delta, 3) << details(o);
}

TEST(LegacyReferenceClient, C7_DrainMeasuresTheExactLoss) {
  // P = 5 debited, legacy returns 1: after the drain flushes the accumulator, 4 are missing.
  ScenarioOutcome o = run_scenario(
      reference_client("legacy"),
      params(ScenarioKind::kCorruptChecksum,
             {EntrySpec{.batch_size = 5, .batched = true, .fault = EntryFault::kChecksum}}));
  ASSERT_TRUE(o.drain.measured) << details(o);
  EXPECT_EQ(o.drain.delta, -4) << details(o);
  EXPECT_TRUE(has(o.violations, RuleId::kC7, "returned 4 permits too few")) << details(o);
  EXPECT_TRUE(has(o.violations, RuleId::kC7,
                  "the legacy rule returns 4 permits too few here, as observed"))
      << details(o);
}

// Fixed and drawn cases share one shrink loop (conform.cc `minimize`): both end at a failing
// case no bigger than the first, one entry with a checksum failure, reproduced.
TEST(LegacyReferenceClient, C7_FixedAndDrawnFailuresAreBothShrunkToOneEntry) {
  for (const bool fixed : {true, false}) {
    ConformOptions options{.client = reference_client("legacy"),
                           .scenarios = {ScenarioKind::kCorruptChecksum},
                           .seed = 491, .cases = fixed ? 0 : 5, .fixed_cases = fixed,
                           .max_shrink_runs = 40, .reproduce = 2, .jobs = 1};
    const ConformReport report = run_conformance(options);
    ASSERT_EQ(report.scenarios.size(), 1u);
    const ScenarioReport& sr = report.scenarios[0];
    ASSERT_TRUE(sr.counterexample) << (fixed ? "fixed" : "drawn");
    EXPECT_TRUE(has(sr.counterexample->violations, RuleId::kC7, ""))
        << details(*sr.counterexample);
    const std::vector<EntrySpec>& entries = sr.counterexample->params.entries;
    ASSERT_EQ(entries.size(), 1u) << (fixed ? "fixed: " : "drawn: ") << sr.original << " -> "
                                  << describe(sr.counterexample->params);
    EXPECT_EQ(entries[0].fault, EntryFault::kChecksum);
    EXPECT_GT(sr.shrink_steps, 0) << sr.original;  // the first failing case was bigger
    EXPECT_EQ(sr.reproduce_runs, 2);
  }
}

TEST(ReferenceClient, X1_DeviationCarriesItsNumbers) {
  ScenarioParams p = params(ScenarioKind::kCorruptChecksum,
                            {EntrySpec{.batch_size = 4, .batched = true,
                                       .fault = EntryFault::kChecksum}});
  p.send_field = false;
  ScenarioOutcome o = run_scenario(reference_client(), p);
  EXPECT_FALSE(o.failed()) << details(o);
  EXPECT_TRUE(has(o.deviations, RuleId::kX1, "b4 (P = 4) may return 1")) << details(o);
  EXPECT_TRUE(has(o.deviations, RuleId::kX1, "allows 1 returned, 3 permits short"))
      << details(o);
  // What the run's own drain measured, beside what the fallback allows.
  EXPECT_TRUE(has(o.deviations, RuleId::kX1, "the drain measured 3 permits short, 1 returned"))
      << details(o);
  EXPECT_EQ(o.drain.delta, -3) << details(o);
}

TEST(ReferenceClient, DuplicatesAfterReconnectReturnExactlyTheirP) {
  ScenarioOutcome o = run_scenario(
      reference_client(),
      params(ScenarioKind::kStartMessageId, {EntrySpec{}, batch(3), EntrySpec{}}));
  EXPECT_FALSE(o.failed()) << details(o);
  EXPECT_EQ(o.before_start_singles, 2) << details(o);
  ASSERT_TRUE(o.drain.measured) << details(o);
  EXPECT_EQ(o.drain.delta, 0) << details(o);
}

// One message at a time cannot be held across the replacement (one in processing, none after
// it): every attempt says so, and the run is not a pass.
TEST(ReferenceClient, HeldWindowNotOpenedIsInconclusive) {
  ScenarioParams p = params(ScenarioKind::kHeldCloseConsumer, {EntrySpec{}});
  p.delay_ms = 0;
  ScenarioOutcome o = run_scenario(reference_client(), p);
  EXPECT_FALSE(o.failed()) << details(o);
  EXPECT_TRUE(o.inconclusive()) << details(o);
  ASSERT_EQ(o.not_opened.size(), 3u) << details(o);  // three attempts, none opened
  EXPECT_NE(o.not_opened.front().find("held 0 unacknowledged"), std::string::npos)
      << o.not_opened.front();
  EXPECT_TRUE(o.windows.empty()) << details(o);
}

// ---- a client that is slow to start (ClientSpec::start_attempts) ----

// A command whose first start hangs without subscribing (as a client can on a busy machine)
// and whose later starts run the reference client; `flag` marks that the first has begun.
ClientSpec slow_first_start_client(const std::string& flag) {
  ClientSpec c = reference_client();
  c.command = absl::StrCat("if mkdir ", flag, " 2>/dev/null; then exec sleep 60; fi; ",
                           reference_command());
  c.startup = std::chrono::milliseconds(1500);
  return c;
}

std::string fresh_flag(std::string_view name) {
  const std::string flag = absl::StrCat(::testing::TempDir(), "/permitcheck-", std::string(name), "-",
                                        ::getpid());
  std::filesystem::remove_all(flag);
  return flag;
}

// The run is judged on the attempt that started; the one that did not is named with why.
TEST(ReferenceClient, RunWhoseClientNeverStartedIsStartedAgainAndSaysSo) {
  const std::string flag = fresh_flag("slow-start");
  ScenarioOutcome o =
      run_scenario(slow_first_start_client(flag), params(ScenarioKind::kCompleteBatches,
                                                         {EntrySpec{.batch_size = 3}}));
  std::filesystem::remove_all(flag);
  EXPECT_FALSE(o.failed()) << details(o);
  EXPECT_FALSE(o.client_never_started) << details(o);
  ASSERT_EQ(o.failed_starts.size(), 1u) << details(o);
  EXPECT_EQ(o.failed_starts[0],
            "attempt 1: hang or start failure: no Subscribe and Flow within 1500 ms "
            "(still running)");
  EXPECT_GE(o.seconds, 1.5) << "the first attempt waited its startup";
}

// A client that never starts is a failure after every attempt, each of them named.
TEST(ClientProcess, ClientThatNeverStartsFailsAfterEveryAttempt) {
  ClientSpec c = reference_client();
  c.command = "exec sleep 60 # {url}";
  c.startup = std::chrono::milliseconds(400);
  ScenarioOutcome o = run_scenario(c, params(ScenarioKind::kCompleteBatches, {EntrySpec{}}));
  EXPECT_TRUE(o.failed());
  EXPECT_TRUE(o.client_never_started);
  ASSERT_TRUE(o.client_failure.has_value());
  EXPECT_NE(o.client_failure->find("no Subscribe and Flow within 400 ms"), std::string::npos)
      << *o.client_failure;
  ASSERT_EQ(o.failed_starts.size(), 2u);  // three attempts: two before the judged one
  EXPECT_EQ(o.failed_starts[1].substr(0, 10), "attempt 2:");
  c.start_attempts = 1;
  EXPECT_TRUE(run_scenario(c, params(ScenarioKind::kCompleteBatches, {EntrySpec{}}))
                  .failed_starts.empty());
}

// Until a client of the run has started once, run_conformance does not start a client again:
// one that never subscribes is reported once, after one `startup`, with its output (not after
// every attempt of every scenario); the scenarios after it are not run.
TEST(ReferenceClient, ConformReportsAClientThatNeverStartedOnceWithoutRestartingIt) {
  const std::string flag = fresh_flag("slow-conform");
  ConformOptions options{.client = slow_first_start_client(flag),
                         .scenarios = {ScenarioKind::kCompleteBatches,
                                       ScenarioKind::kPartialBatches},
                         .cases = 0, .jobs = 1};
  const auto t0 = std::chrono::steady_clock::now();
  ConformReport report = run_conformance(options);
  std::filesystem::remove_all(flag);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(6000));
  EXPECT_TRUE(report.client_could_not_start);
  EXPECT_FALSE(report.passed());
  ASSERT_TRUE(report.never_started.has_value());
  ASSERT_TRUE(report.never_started->client_failure.has_value());
  EXPECT_NE(report.never_started->client_failure->find("no Subscribe and Flow within 1500 ms"),
            std::string::npos)
      << *report.never_started->client_failure;
  ASSERT_EQ(report.scenarios.size(), 2u);
  for (const ScenarioReport& s : report.scenarios) {
    EXPECT_TRUE(s.restarts.empty()) << details(s);
    EXPECT_FALSE(s.counterexample.has_value()) << details(s);  // reported once, for the run
    EXPECT_TRUE(s.skipped_never_started) << details(s);
  }
  EXPECT_EQ(report.scenarios[0].runs + report.scenarios[1].runs, 1);
}

// A client killed by a signal is reported with the signal's name, also when the shell that
// runs it reports the death as exit status 128 + n.
TEST(ClientProcess, E1_CrashIsReportedWithItsSignal) {
#ifdef PERMITCHECK_SANITIZED_BUILD
  GTEST_SKIP() << "the sanitized reference client catches SIGSEGV itself and exits with a "
                  "status: checked in the plain build";
#endif
  ClientSpec c = reference_client();
  c.command = absl::StrCat(reference_command(), " & pid=$!; sleep 0.3; kill -SEGV $pid; wait $pid");
  ScenarioOutcome o = run_scenario(
      c, params(ScenarioKind::kCompleteBatches, {batch(4)}));
  ASSERT_TRUE(o.client_failure.has_value()) << details(o);
  EXPECT_NE(o.client_failure->find("killed by SIGSEGV"), std::string::npos) << details(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE1, "killed by SIGSEGV")) << details(o);
}

TEST(ReferenceClient, X1_OldBrokerChecksumFailureIsAKnownDeviationNotAViolation) {
  ScenarioParams p = params(ScenarioKind::kCorruptChecksum,
                            {EntrySpec{.batch_size = 8, .batched = true,
                                       .fault = EntryFault::kChecksum}});
  p.send_field = false;
  ScenarioOutcome o = run_scenario(reference_client(), p);
  EXPECT_FALSE(o.failed()) << details(o);
  EXPECT_TRUE(has(o.deviations, RuleId::kX1)) << details(o);
}

TEST(LegacyReferenceClient, E5_ChecksumFailureLosesPermits) {
  ScenarioOutcome o = run_scenario(
      reference_client("legacy"),
      params(ScenarioKind::kCorruptChecksum,
             {EntrySpec{.batch_size = 8, .batched = true, .fault = EntryFault::kChecksum}}));
  // P = 8 debited, legacy returns 1: available 2, 8 permits never come back.
  EXPECT_TRUE(has(o.violations, RuleId::kE5, "broker available 2")) << details(o);
  EXPECT_EQ(o.debited, 8);
}

// Quiescence is silence apart from keep-alives: a client's PINGs do not keep a run busy.
TEST(ConformanceBroker, KeepAlivePingsAreNotActivity) {
  ConformanceBroker broker(BrokerOptions{});
  ASSERT_TRUE(broker.start().ok());
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  socket.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), broker.port()));
  wire::BaseCommand connect;
  connect.set_type(wire::BaseCommand::CONNECT);
  connect.mutable_connect()->set_client_version("test");
  connect.mutable_connect()->set_protocol_version(21);
  asio::write(socket, asio::buffer(protocol::encode_command(connect)));
  ASSERT_TRUE(broker.wait_until([](const BrokerView& v) { return v.frames_in >= 1; },
                                std::chrono::seconds(5)));
  const auto before = broker.view().last_activity;
  wire::BaseCommand ping;
  ping.set_type(wire::BaseCommand::PING);
  ping.mutable_ping();
  for (int i = 0; i < 3; ++i) asio::write(socket, asio::buffer(protocol::encode_command(ping)));
  ASSERT_TRUE(broker.wait_until([](const BrokerView& v) { return v.pings >= 3; },
                                std::chrono::seconds(5)));
  EXPECT_EQ(broker.view().last_activity, before);
  EXPECT_EQ(broker.view().frames_in, 4);
  broker.stop();
}

// ---- pulsar-flex 1.1.1: the deviations established, pinned ----

TEST(PulsarFlex, CompleteBatchesReturnExactlyWhatWasDebited) {
  SKIP_WITHOUT_PULSAR_FLEX();
  ScenarioOutcome o = run_scenario(
      pulsar_flex_client(),
      params(ScenarioKind::kCompleteBatches, {batch(4), EntrySpec{}, batch(3)}));
  EXPECT_FALSE(o.failed()) << details(o);
}

TEST(PulsarFlex, E2_E5_PartialBatchRedeliveryReturnsTooMuch) {
  SKIP_WITHOUT_PULSAR_FLEX();
  // B = 10 with 9 indexes acknowledged earlier: P = 1. pulsar-flex ignores ack_set, hands
  // all 10 messages to the application and counts 10 against its permits.
  EntrySpec e = batch(10);
  e.cleared = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  ScenarioOutcome o = run_scenario(pulsar_flex_client(),
                                   params(ScenarioKind::kPartialBatches, {e}));
  EXPECT_TRUE(has(o.violations, RuleId::kE2, "over-grant by 4")) << details(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE5, "broker available 14")) << details(o);
  EXPECT_EQ(o.debited, 1);
  EXPECT_EQ(o.granted, 15);
}

TEST(PulsarFlex, C7_UnreadableMetadataCrashesTheClient) {
  SKIP_WITHOUT_PULSAR_FLEX();
  ScenarioOutcome o = run_scenario(
      pulsar_flex_client(),
      params(ScenarioKind::kUnreadableMetadata,
             {EntrySpec{.batch_size = 2, .batched = true, .fault = EntryFault::kMetadata}}));
  ASSERT_TRUE(o.client_failure.has_value()) << details(o);
  EXPECT_NE(o.client_failure->find("crashed"), std::string::npos) << details(o);
  EXPECT_TRUE(has(o.violations, RuleId::kC7, "crashed")) << details(o);
}

TEST(PulsarFlex, C7_TruncatedBatchCrashesTheClient) {
  SKIP_WITHOUT_PULSAR_FLEX();
  ScenarioOutcome o = run_scenario(
      pulsar_flex_client(),
      params(ScenarioKind::kTruncatedBatch,
             {EntrySpec{.batch_size = 2, .batched = true, .fault = EntryFault::kTruncatedBatch,
                        .truncate_at = 0}}));
  EXPECT_TRUE(has(o.violations, RuleId::kC7, "crashed")) << details(o);
}

TEST(PulsarFlex, E2_ReconnectCarriesTheOldCountIntoTheNewIncarnation) {
  SKIP_WITHOUT_PULSAR_FLEX();
  // 3 consumed before the drop; the new incarnation is granted 10 afresh, but pulsar-flex
  // keeps its old count (10 - 3), so 3 more messages trigger a Flow of 5: available 12.
  ScenarioOutcome o = run_scenario(
      pulsar_flex_client(),
      params(ScenarioKind::kReconnect, {batch(3), EntrySpec{}, batch(2)}, /*disrupt_after=*/1));
  EXPECT_EQ(o.incarnations, 2) << details(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE2, "over-grant by 2")) << details(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE5, "broker available 12")) << details(o);
}

TEST(PulsarFlex, E2_CloseConsumerCarriesTheOldCountIntoTheNewIncarnation) {
  SKIP_WITHOUT_PULSAR_FLEX();
  ScenarioOutcome o = run_scenario(
      pulsar_flex_client(),
      params(ScenarioKind::kCloseConsumer, {batch(3), EntrySpec{}, batch(2)},
             /*disrupt_after=*/1));
  EXPECT_EQ(o.incarnations, 2) << details(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE2, "over-grant by 2")) << details(o);
}

TEST(PulsarFlex, E2_MessagesForAnUnknownConsumerAreCreditedToTheRealOne) {
  SKIP_WITHOUT_PULSAR_FLEX();
  // A batch of 3 and a single message for consumer 41, never subscribed; then a batch of 2
  // for the real consumer 0. pulsar-flex consumes all 6 as its own: a Flow of 5 for 2 debited.
  ScenarioOutcome o = run_scenario(
      pulsar_flex_client(),
      params(ScenarioKind::kUnknownConsumer, {batch(2)}, /*disrupt_after=*/0));
  EXPECT_TRUE(has(o.violations, RuleId::kE2, "over-grant by 3")) << details(o);
  EXPECT_EQ(o.debited, 2);
}

TEST(PulsarFlex, E5_NegativeAckDropsQueuedMessagesWithoutTheirPermits) {
  SKIP_WITHOUT_PULSAR_FLEX();
  ScenarioParams p = params(ScenarioKind::kNegativeAck, {batch(2), batch(2), EntrySpec{}});
  p.nack_every = 2;
  ScenarioOutcome o = run_scenario(pulsar_flex_client(), p);
  EXPECT_TRUE(has(o.violations, RuleId::kE5, "unreturned")) << details(o);
}

TEST(PulsarFlex, C7_CorruptChecksumIsNotDetectedButPermitsStayExact) {
  SKIP_WITHOUT_PULSAR_FLEX();
  // pulsar-flex never verifies the crc32c: the corrupt entry reaches the application as if
  // intact. That is no permit rule's business, so the run passes; this test notices if it
  // starts validating (then C7 decides what it must return).
  ScenarioOutcome o = run_scenario(
      pulsar_flex_client(),
      params(ScenarioKind::kCorruptChecksum,
             {EntrySpec{.batch_size = 3, .batched = true, .fault = EntryFault::kChecksum}}));
  EXPECT_FALSE(o.failed()) << details(o);
}

TEST(PulsarFlex, K7_PartialBatchFailingPastItsLastDeliverableIndexCrashesTheClient) {
  SKIP_WITHOUT_PULSAR_FLEX();
  // P = 3 of B = 7, cut on index 6: its batch parser reads past the end (RangeError in
  // src/client/serde/payloadCommand/batch/deserializer.js:6, uncaught).
  EntrySpec e = batch(7);
  e.cleared = {1, 3, 4, 6};
  e.fault = EntryFault::kTruncatedBatch;
  e.truncate_at = 6;
  ScenarioOutcome o = run_scenario(pulsar_flex_client(),
                                   params(ScenarioKind::kPartialBatchFailure, {e}));
  EXPECT_TRUE(has(o.violations, RuleId::kK7, "crashed")) << details(o);
  EXPECT_EQ(o.debited, 3) << details(o);
}

TEST(PulsarFlex, E2_CompressionIsIgnoredSoAPartialBatchCountsEveryMessage) {
  SKIP_WITHOUT_PULSAR_FLEX();
  // Declared LZ4, never decompressed: the raw bytes are parsed as the batch, all 4 messages
  // of a partial batch (P = 2) counted.
  EntrySpec e = batch(4);
  e.cleared = {1, 3};
  e.fault = EntryFault::kDecompression;
  ScenarioOutcome o = run_scenario(pulsar_flex_client(),
                                   params(ScenarioKind::kDecompression, {e}));
  EXPECT_TRUE(has(o.violations, RuleId::kE2)) << details(o);
  ASSERT_TRUE(o.drain.measured) << details(o);
  EXPECT_GT(o.drain.delta, 0) << details(o);
}

// Its Subscribe names no consumer epoch, so no message can be stale: the scenario says so and
// is NOT-APPLICABLE (neither a pass nor a failure).
TEST(PulsarFlex, StaleEpochWindowCannotOpenWithoutAConsumerEpoch) {
  SKIP_WITHOUT_PULSAR_FLEX();
  ScenarioParams p = params(ScenarioKind::kStaleEpoch, {batch(6)});
  p.delay_ms = 120;
  p.nack_every = 3;
  ScenarioOutcome o = run_scenario(pulsar_flex_client(), p);
  EXPECT_TRUE(o.not_applicable()) << details(o);
  EXPECT_FALSE(o.inconclusive()) << details(o);
  ASSERT_FALSE(o.cannot_open.empty()) << details(o);
  EXPECT_NE(o.cannot_open.front().find("named no consumer epoch"), std::string::npos)
      << o.cannot_open.front();
}

TEST(PulsarFlex, Exploration_FindsTheDeviationsAndShrinksThem) {
  SKIP_WITHOUT_PULSAR_FLEX();
  ConformOptions options{.client = pulsar_flex_client(),
                         .scenarios = {ScenarioKind::kPartialBatches, ScenarioKind::kReconnect},
                         .seed = 1, .cases = 2, .max_shrink_runs = 3};
  ConformReport report = run_conformance(options);
  ASSERT_EQ(report.scenarios.size(), 2u);
  EXPECT_FALSE(report.passed());
  for (const ScenarioReport& s : report.scenarios) {
    ASSERT_FALSE(s.passed()) << scenario_info(s.kind).name;
    EXPECT_TRUE(has(s.counterexample->violations, RuleId::kE2) ||
                has(s.counterexample->violations, RuleId::kE5))
        << details(*s.counterexample);
  }
}

}  // namespace
}  // namespace permitcheck::conformance
