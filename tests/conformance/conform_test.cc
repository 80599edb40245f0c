// End-to-end tests of the conformance broker against real client processes over real sockets.
//
// ReferenceClient: the positive control (rev-d, built from spec/) passes every scenario, and
// with --ruleset legacy it is caught. PulsarFlex: each deviation established for the
// third-party JavaScript client pulsar-flex 1.1.1 is pinned by rule ID and numbers, on the
// minimal counterexample `permitcheck conform` shrank it to, so a change on either side is
// noticed. The PulsarFlex tests skip when node or the installed package is missing
// (ci/install-node-clients.sh installs it) and in sanitizer builds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "conformance/conform.h"
#include "conformance/scenario.h"

namespace permitcheck::conformance {
namespace {

using spec::RuleId;

std::string reference_command(std::string_view ruleset = "rev-d") {
  return absl::StrCat(PERMITCHECK_REFERENCE_CLIENT,
                      " --url {url} --q {q} --delay-ms {delay_ms} --nack-every {nack_every}"
                      " --ruleset ",
                      std::string(ruleset));
}

ClientSpec reference_client(std::string_view ruleset = "rev-d") {
  return ClientSpec{.command = reference_command(ruleset), .q = 10, .t = 5,
                    .timeout = std::chrono::milliseconds(15000),
                    .idle = std::chrono::milliseconds(800)};
}

std::string pulsar_flex_dir() {
  return std::string(PERMITCHECK_SOURCE_DIR) + "/conformance/clients/pulsar-flex";
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

bool has(const std::vector<spec::Finding>& findings, RuleId rule, std::string_view text = "") {
  return std::any_of(findings.begin(), findings.end(), [&](const spec::Finding& f) {
    return f.rule == rule && f.explanation.find(text) != std::string::npos;
  });
}

std::string dump(const ScenarioOutcome& o) {
  std::string s = absl::StrCat(describe(o.params), "\n");
  for (const spec::Finding& f : o.violations) absl::StrAppend(&s, spec::format_finding(f), "\n");
  for (const spec::Finding& f : o.deviations) {
    absl::StrAppend(&s, "(deviation) ", spec::format_finding(f), "\n");
  }
  if (o.client_failure) absl::StrAppend(&s, "client: ", *o.client_failure, "\n");
  absl::StrAppend(&s, o.client_log_tail);
  return s;
}

EntrySpec batch(std::int64_t b) { return EntrySpec{.batch_size = b, .batched = true}; }

ScenarioParams params(ScenarioKind kind, std::vector<EntrySpec> entries, int disrupt_after = 0) {
  return ScenarioParams{.kind = kind, .entries = std::move(entries),
                        .disrupt_after = disrupt_after};
}

// ---- the reference client: positive and negative control ----

TEST(ReferenceClient, E1_E2_E5_C7_N2_PassesEveryScenario) {
  ConformOptions options{.client = reference_client(), .seed = 7, .cases = 2,
                         .max_shrink_runs = 2};
  ConformReport report = run_conformance(options);
  ASSERT_EQ(report.scenarios.size(), all_scenarios().size());
  for (const ScenarioReport& s : report.scenarios) {
    EXPECT_TRUE(s.passed()) << scenario_info(s.kind).name << ": "
                            << (s.counterexample ? dump(*s.counterexample) : "");
  }
  EXPECT_TRUE(report.passed());
}

TEST(ReferenceClient, X1_OldBrokerChecksumFailureIsAKnownDeviationNotAViolation) {
  ScenarioParams p = params(ScenarioKind::kCorruptChecksum,
                            {EntrySpec{.batch_size = 8, .batched = true,
                                       .fault = EntryFault::kChecksum}});
  p.send_field = false;
  ScenarioOutcome o = run_scenario(reference_client(), p);
  EXPECT_FALSE(o.failed()) << dump(o);
  EXPECT_TRUE(has(o.deviations, RuleId::kX1)) << dump(o);
}

TEST(LegacyReferenceClient, L1_C7_E5_ChecksumFailureLosesPermits) {
  ScenarioOutcome o = run_scenario(
      reference_client("legacy"),
      params(ScenarioKind::kCorruptChecksum,
             {EntrySpec{.batch_size = 8, .batched = true, .fault = EntryFault::kChecksum}}));
  // P = 8 debited, legacy returns 1: available 2, 8 permits never come back.
  EXPECT_TRUE(has(o.violations, RuleId::kE5, "broker available 2")) << dump(o);
  EXPECT_EQ(o.debited, 8);
}

// ---- pulsar-flex 1.1.1: the deviations established, pinned ----

TEST(PulsarFlex, E1_CompleteBatchesReturnExactlyWhatWasDebited) {
  SKIP_WITHOUT_PULSAR_FLEX();
  ScenarioOutcome o = run_scenario(
      pulsar_flex_client(),
      params(ScenarioKind::kCompleteBatches, {batch(4), EntrySpec{}, batch(3)}));
  EXPECT_FALSE(o.failed()) << dump(o);
}

TEST(PulsarFlex, E2_E5_PartialBatchRedeliveryReturnsTooMuch) {
  SKIP_WITHOUT_PULSAR_FLEX();
  // B = 10 with 9 indexes acknowledged earlier: P = 1. pulsar-flex ignores ack_set, hands
  // all 10 messages to the application and counts 10 against its permits.
  EntrySpec e = batch(10);
  e.cleared = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  ScenarioOutcome o = run_scenario(pulsar_flex_client(),
                                   params(ScenarioKind::kPartialBatches, {e}));
  EXPECT_TRUE(has(o.violations, RuleId::kE2, "over-grant by 4")) << dump(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE5, "broker available 14")) << dump(o);
  EXPECT_EQ(o.debited, 1);
  EXPECT_EQ(o.granted, 15);
}

TEST(PulsarFlex, C7_UnreadableMetadataCrashesTheClient) {
  SKIP_WITHOUT_PULSAR_FLEX();
  ScenarioOutcome o = run_scenario(
      pulsar_flex_client(),
      params(ScenarioKind::kUnreadableMetadata,
             {EntrySpec{.batch_size = 2, .batched = true, .fault = EntryFault::kMetadata}}));
  ASSERT_TRUE(o.client_failure.has_value()) << dump(o);
  EXPECT_NE(o.client_failure->find("crashed"), std::string::npos) << dump(o);
  EXPECT_TRUE(has(o.violations, RuleId::kC7, "crashed")) << dump(o);
}

TEST(PulsarFlex, C7_TruncatedBatchCrashesTheClient) {
  SKIP_WITHOUT_PULSAR_FLEX();
  ScenarioOutcome o = run_scenario(
      pulsar_flex_client(),
      params(ScenarioKind::kTruncatedBatch,
             {EntrySpec{.batch_size = 2, .batched = true, .fault = EntryFault::kTruncatedBatch,
                        .truncate_at = 0}}));
  EXPECT_TRUE(has(o.violations, RuleId::kC7, "crashed")) << dump(o);
}

TEST(PulsarFlex, N2_E2_ReconnectCarriesTheOldCountIntoTheNewIncarnation) {
  SKIP_WITHOUT_PULSAR_FLEX();
  // 3 consumed before the drop; the new incarnation is granted 10 afresh, but pulsar-flex
  // keeps its old count (10 - 3), so 3 more messages trigger a Flow of 5: available 12.
  ScenarioOutcome o = run_scenario(
      pulsar_flex_client(),
      params(ScenarioKind::kReconnect, {batch(3), EntrySpec{}, batch(2)}, /*disrupt_after=*/1));
  EXPECT_EQ(o.incarnations, 2) << dump(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE2, "over-grant by 2")) << dump(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE5, "broker available 12")) << dump(o);
}

TEST(PulsarFlex, N2_E2_CloseConsumerCarriesTheOldCountIntoTheNewIncarnation) {
  SKIP_WITHOUT_PULSAR_FLEX();
  ScenarioOutcome o = run_scenario(
      pulsar_flex_client(),
      params(ScenarioKind::kCloseConsumer, {batch(3), EntrySpec{}, batch(2)},
             /*disrupt_after=*/1));
  EXPECT_EQ(o.incarnations, 2) << dump(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE2, "over-grant by 2")) << dump(o);
}

TEST(PulsarFlex, E3_E2_MessagesForAnUnknownConsumerAreCreditedToTheRealOne) {
  SKIP_WITHOUT_PULSAR_FLEX();
  // A batch of 3 and a single message for consumer 41, never subscribed; then a batch of 2
  // for the real consumer 0. pulsar-flex consumes all 6 as its own: a Flow of 5 for 2 debited.
  ScenarioOutcome o = run_scenario(
      pulsar_flex_client(),
      params(ScenarioKind::kUnknownConsumer, {batch(2)}, /*disrupt_after=*/0));
  EXPECT_TRUE(has(o.violations, RuleId::kE2, "over-grant by 3")) << dump(o);
  EXPECT_EQ(o.debited, 2);
}

TEST(PulsarFlex, M1_E5_NegativeAckDropsQueuedMessagesWithoutTheirPermits) {
  SKIP_WITHOUT_PULSAR_FLEX();
  ScenarioParams p = params(ScenarioKind::kNegativeAck, {batch(2), batch(2), EntrySpec{}});
  p.nack_every = 2;
  ScenarioOutcome o = run_scenario(pulsar_flex_client(), p);
  EXPECT_TRUE(has(o.violations, RuleId::kE5, "unreturned")) << dump(o);
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
  EXPECT_FALSE(o.failed()) << dump(o);
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
        << dump(*s.counterexample);
  }
}

}  // namespace
}  // namespace permitcheck::conformance
