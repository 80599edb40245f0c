// Q and T read off the client's own Flows (conformance/flow_probe.h, spec/flow_settings.h), and
// a given Q the client contradicts reported as a configuration mismatch, not a violation
// (issue 33). The reference client at two receiver queue sizes; a reference client whose Q is
// fixed in its command, whatever {q} says, stands for a client that ignores {q}.
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "conformance/conform.h"
#include "conformance/flow_probe.h"
#include "conformance/scenario.h"
#include "spec/permit_state.h"
#include "tests/conformance/official_client.h"

namespace permitcheck::conformance {
namespace {

// The reference client with its receiver queue size fixed at `q`, whatever {q} it is told.
ClientSpec reference_client_of_q(std::int64_t q) {
  ClientSpec c = testing::reference_client();
  c.command = absl::StrCat(PERMITCHECK_REFERENCE_CLIENT, " --url {url} --q ", q,
                           " --delay-ms {delay_ms} --nack-every {nack_every}");
  return c;
}

#ifndef PERMITCHECK_SANITIZED_BUILD

TEST(FlowProbe, ReadsTheReferenceClientsQAndTAtTwoConfigurations) {
  for (const std::int64_t q : {10, 7}) {
    ClientSpec client = testing::reference_client();
    client.q = q;  // told as {q}
    const ScenarioOutcome probe = probe_flow_settings(client);
    ASSERT_FALSE(probe.client_never_started) << probe.client_failure.value_or("");
    EXPECT_EQ(probe.flows_seen.q, q);
    // The reference client's own T (clients/reference: spec::default_threshold).
    EXPECT_EQ(probe.flows_seen.t, spec::default_threshold(q)) << "Q = " << q;
    EXPECT_TRUE(probe.violations.empty());
  }
}

// Q and T inferred from a client that ignores {q}: the scenarios are judged against its own
// Q = 40 and T = 20 (told {q} = 10 all along) and pass, where judging it against 10 reported
// an over-grant of 30.
TEST(RunConformance, InfersQAndTFromAClientThatIgnoresItsQ) {
  ConformOptions o{.client = reference_client_of_q(40), .infer_q = true, .infer_t = true};
  o.client.t = std::nullopt;
  o.scenarios = {ScenarioKind::kCompleteBatches};
  o.cases = 0;
  const ConformReport r = run_conformance(o);
  EXPECT_EQ(r.settings.q, 40);
  EXPECT_EQ(r.settings.t, 20);
  EXPECT_EQ(r.settings.q_source, SettingSource::kInferred);
  EXPECT_EQ(r.settings.t_source, SettingSource::kInferred);
  EXPECT_EQ(r.settings.text(),
            "Q = 40 and T = 20, inferred from the client's first Flow and its replenishing Flows");
  EXPECT_FALSE(r.settings_mismatch.has_value());
  EXPECT_EQ(r.outcome(), spec::Outcome::kPass);
}

// --q 10 and --threshold 5 given (no probe), the client's Q 1000: the first run is not judged,
// the report names both numbers, nothing is a counterexample and the run is not a FAIL.
TEST(RunConformance, AGivenQTheClientContradictsIsAMismatchNotAViolation) {
  ConformOptions o{.client = reference_client_of_q(1000)};
  o.scenarios = {ScenarioKind::kCompleteBatches, ScenarioKind::kPartialBatches};
  o.cases = 0;
  o.jobs = 1;
  const ConformReport r = run_conformance(o);
  ASSERT_TRUE(r.settings_mismatch.has_value());
  EXPECT_EQ(*r.settings_mismatch,
            "the client's first Flow granted 1000 permits, its receiver queue size Q, not the 10 "
            "given");
  EXPECT_FALSE(r.has_counterexample());
  EXPECT_NE(r.outcome(), spec::Outcome::kFail);
  ASSERT_EQ(r.scenarios.size(), 2u);
  EXPECT_TRUE(r.scenarios[0].settings_mismatch);
  EXPECT_EQ(r.scenarios[0].runs, 1);  // stopped at the first run
  EXPECT_TRUE(r.scenarios[1].settings_mismatch);
  EXPECT_EQ(r.scenarios[1].runs, 0);  // not run
}

// The same with T to infer: the probe sees the mismatch before any scenario runs.
TEST(RunConformance, TheFlowProbeReportsAGivenQTheClientContradicts) {
  ConformOptions o{.client = reference_client_of_q(1000), .infer_t = true};
  o.scenarios = {ScenarioKind::kCompleteBatches};
  o.cases = 0;
  const ConformReport r = run_conformance(o);
  ASSERT_TRUE(r.settings_mismatch.has_value());
  EXPECT_NE(r.settings_mismatch->find("granted 1000 permits"), std::string::npos);
  EXPECT_EQ(r.scenarios.at(0).runs, 0);
  EXPECT_FALSE(r.has_counterexample());
}

// A given Q the client uses runs as before: judged, passed, its sources "given".
TEST(RunConformance, AGivenQTheClientUsesRunsAsBefore) {
  ConformOptions o{.client = testing::reference_client()};
  o.scenarios = {ScenarioKind::kCompleteBatches};
  o.cases = 0;
  const ConformReport r = run_conformance(o);
  EXPECT_FALSE(r.settings_mismatch.has_value());
  EXPECT_EQ(r.settings.q, 10);
  EXPECT_EQ(r.settings.t, 5);
  EXPECT_EQ(r.settings.q_source, SettingSource::kGiven);
  EXPECT_EQ(r.outcome(), spec::Outcome::kPass);
  EXPECT_GT(r.scenarios.at(0).cases_passed, 0);
}

#endif  // PERMITCHECK_SANITIZED_BUILD

}  // namespace
}  // namespace permitcheck::conformance
