// The model-based properties: the rev-d implementation conforms to the specification (monitor
// and model agree with it after every step, E5/E6 at quiescence); the same property fails in
// legacy mode; each legacy bug L1-L11 is found, shrunk, written as a trace file and re-checked
// by the monitor with the same rule.
//
// Seeds and case counts come from PropertyParams::from_env: CI runs the defaults below with
// the fixed seed set in properties/CMakeLists.txt; PERMITCHECK_PROPERTY_CASES=10000 (and
// PERMITCHECK_FIND_CASES) make a longer run.
#include <iostream>
#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "properties/runner.h"
#include "spec/legacy_catalogue.h"
#include "spec/plain_text.h"

namespace permitcheck::properties {
namespace {

constexpr int kConformanceCases = 2000;  // CI: about 1 s plain, 15 s under ASan

std::string counterexample_dir() {
#ifdef PERMITCHECK_COUNTEREXAMPLE_DIR
  return PERMITCHECK_COUNTEREXAMPLE_DIR;
#else
  return "counterexamples";
#endif
}

TEST(RevDProperty, ImplementationConformsToSpecification) {
  const PropertyParams params = PropertyParams::from_env(kConformanceCases);
  const PropertyResult r = run_property({.name = "rev-d conformance"}, params);
  std::cout << "rev-d: " << r.cases << " cases, seed " << r.seed << ", " << r.seconds << " s\n";
  EXPECT_TRUE(r.passed) << format_failure(r);
}

TEST(LegacyProperty, SamePropertyFailsInLegacyMode) {
  const PropertyParams params = PropertyParams::from_env(kConformanceCases);
  const PropertyResult r = run_property(
      {.name = "legacy conformance", .mode = impl::Mode::kLegacy}, params);
  ASSERT_FALSE(r.passed) << "legacy mode passed " << r.cases << " cases (seed " << r.seed << ")";
  ASSERT_TRUE(r.counterexample.has_value()) << r.error;
  std::cout << format_failure(r);
}

// The legacy mode reproduces the specification's legacy ruleset: checked against it (monitor
// and model both under `legacy`), the legacy implementation conforms.
TEST(LegacyFidelity, LegacyModeConformsToTheLegacyRuleset) {
  const PropertyParams params = PropertyParams::from_env(kConformanceCases);
  const PropertyResult r = run_property({.name = "legacy vs the legacy ruleset",
                                         .mode = impl::Mode::kLegacy,
                                         .rules = spec::RulesetId::kLegacy},
                                        params);
  EXPECT_TRUE(r.passed) << format_failure(r);
}

void expect_found(const std::string& id) {
  PropertyParams params = PropertyParams::from_env(kConformanceCases);
#ifdef PERMITCHECK_SANITIZED
  params.searches = 2;  // the sanitizer build checks memory safety; the plain build runs 4
#endif
  const LegacyFinding f = find_legacy_bug(id, params, counterexample_dir());
  ASSERT_TRUE(f.found) << id << " not found in " << f.cases << " cases (seed " << params.seed
                       << "); raise PERMITCHECK_FIND_CASES";
  ASSERT_TRUE(f.rule.has_value());
  const std::optional<spec::RuleId> expected = spec::legacy_row_rule(id);  // the catalogue's
  ASSERT_TRUE(expected.has_value()) << id;
  EXPECT_EQ(spec::rule_name(*f.rule), spec::rule_name(*expected));
  EXPECT_TRUE(f.recheck_ok) << f.trace_file << ": " << f.recheck_text;
  EXPECT_LE(f.steps, 8) << id << " shrank only to " << f.steps << " steps";
  PropertyResult shown{.name = "legacy " + id, .cases = f.kept_cases,
                       .budget = params.find_cases, .seed = f.seed,
                       .max_steps = params.max_steps, .seconds = f.seconds,
                       .counterexample = f.counterexample};
  std::cout << id << " found after " << spec::count_noun(f.cases, "case") << " (" << f.searches
            << " of " << params.searches << " searches found it), shrunk to "
            << spec::count_noun(f.steps, "step") << ", written to " << f.trace_file << "\n  re-checked: " << f.recheck_text
            << "\n" << format_failure(shown);
}

TEST(LegacyFindings, L1_ChecksumFailureFoundAndShrunk) { expect_found("L1"); }
TEST(LegacyFindings, L2_MetadataFailureFoundAndShrunk) { expect_found("L2"); }
TEST(LegacyFindings, L3_DecompressionFailureFoundAndShrunk) { expect_found("L3"); }
TEST(LegacyFindings, L4_BatchFailureLosesPermitsFoundAndShrunk) { expect_found("L4"); }
TEST(LegacyFindings, L5_PartialBatchFailureOverGrantsFoundAndShrunk) { expect_found("L5"); }
TEST(LegacyFindings, L6_StaleEpochDiscardCrossesIncarnationsFoundAndShrunk) {
  expect_found("L6");
}
TEST(LegacyFindings, L7_SameConnectionRecreationOverGrantsFoundAndShrunk) { expect_found("L7"); }
TEST(LegacyFindings, L8_RejectedEntryDebitedFoundAndShrunk) { expect_found("L8"); }
TEST(LegacyFindings, L9_BeforeStartMessageIdLosesPermitFoundAndShrunk) { expect_found("L9"); }
TEST(LegacyFindings, L10_CryptoDiscardOfPartialBatchFoundAndShrunk) { expect_found("L10"); }
TEST(LegacyFindings, L11_OldFlowAfterReplacementSubscribeFoundAndShrunk) {
  expect_found("L11");
}

}  // namespace
}  // namespace permitcheck::properties
