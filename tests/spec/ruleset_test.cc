// Pins the decision-point values of each ruleset (a changed value is a reviewed diff). These
// tests name no rule ID: the behaviour each decision selects is pinned where it is checked.
#include "spec/ruleset.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace permitcheck::spec {
namespace {

using ::testing::HasSubstr;

const Ruleset& rev_d() { return ruleset(RulesetId::kRevD); }
const Ruleset& legacy() { return ruleset(RulesetId::kLegacy); }

TEST(Ruleset, ParseRulesetFindsEachByNameAndNamesTheKnownOnes) {
  absl::StatusOr<const Ruleset*> d = parse_ruleset("rev-d");
  absl::StatusOr<const Ruleset*> l = parse_ruleset("legacy");
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(*d, &rev_d());
  EXPECT_EQ(*l, &legacy());
  EXPECT_TRUE((*d)->broker_sends_message_permits);   // W3
  EXPECT_FALSE((*l)->broker_sends_message_permits);  // old broker
  absl::StatusOr<const Ruleset*> z = parse_ruleset("rev-z");
  ASSERT_FALSE(z.ok());
  EXPECT_EQ(z.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(z.status().message()), HasSubstr("rev-z"));
  EXPECT_THAT(std::string(z.status().message()), HasSubstr("legacy, rev-d"));
}

TEST(Ruleset, AllRulesetsInRevisionOrderLegacyFirst) {
  const auto all = all_rulesets();
  ASSERT_EQ(all.size(), 2U);
  EXPECT_EQ(all[0]->id, RulesetId::kLegacy);
  EXPECT_EQ(all[0]->name, "legacy");
  EXPECT_EQ(all[1]->id, RulesetId::kRevD);
  EXPECT_EQ(all[1]->name, "rev-d");
  for (const Ruleset* r : all) EXPECT_EQ(&ruleset(r->id), r);
}

TEST(Ruleset, RevDDebitsFinalizedLegacyPreAdmission) {
  EXPECT_EQ(rev_d().consumer_debit, DebitSource::kFinalized);
  EXPECT_EQ(rev_d().finalized_dispatchers, DispatcherCoverage::kAllSix);
  EXPECT_EQ(legacy().consumer_debit, DebitSource::kPreAdmission);
  EXPECT_EQ(legacy().finalized_dispatchers, DispatcherCoverage::kNone);
}

TEST(Ruleset, OnlyRevDClientReadsMessagePermits) {
  EXPECT_TRUE(rev_d().client_reads_message_permits);
  EXPECT_FALSE(legacy().client_reads_message_permits);
}

TEST(Ruleset, EarlyFailureReturnDecision) {
  EXPECT_EQ(rev_d().early_failure, EarlyFailureReturn::kResolvedP);
  EXPECT_EQ(legacy().early_failure, EarlyFailureReturn::kOne);
}

TEST(Ruleset, BatchFailureReturnDecision) {
  EXPECT_EQ(rev_d().batch_failure, BatchFailureReturn::kRemainingBudget);
  EXPECT_EQ(legacy().batch_failure, BatchFailureReturn::kSkippedPlusOne);
  EXPECT_TRUE(rev_d().budget_tracked);
  EXPECT_FALSE(legacy().budget_tracked);
}

TEST(Ruleset, DirectReturnsComeFromTheBudgetOnlyInRevD) {
  EXPECT_EQ(rev_d().direct_returns, DirectReturns::kFromBudget);
  EXPECT_EQ(legacy().direct_returns, DirectReturns::kNoBudget);
}

TEST(Ruleset, BeforeStartReturnDecision) {
  EXPECT_EQ(rev_d().before_start, BeforeStartReturn::kCommandOwned);
  EXPECT_EQ(legacy().before_start, BeforeStartReturn::kNothing);
}

TEST(Ruleset, ReturnScopeAndFlowRecheckDecisions) {
  EXPECT_EQ(rev_d().return_scope, ReturnScope::kIncarnation);
  EXPECT_EQ(legacy().return_scope, ReturnScope::kCurrentConsumer);
  EXPECT_EQ(rev_d().flow_recheck, FlowRecheck::kIdentity);
  EXPECT_EQ(legacy().flow_recheck, FlowRecheck::kNone);
}

TEST(Ruleset, DecisionsSharedByEveryRuleset) {
  for (const Ruleset* r : all_rulesets()) {
    EXPECT_EQ(r->inconsistent, InconsistentHandling::kCorruptedData) << r->name;
    EXPECT_EQ(r->skipped_release, SkippedRelease::kDuplicateOnly) << r->name;
    EXPECT_FALSE(r->summary.empty()) << r->name;
  }
}

}  // namespace
}  // namespace permitcheck::spec
