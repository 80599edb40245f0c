// Pins the decision-point values of each ruleset (a changed value is a reviewed diff). These
// tests name no rule ID: the behaviour each decision selects is pinned where it is checked.
#include "spec/ruleset.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/spec/monitor_testing.h"

namespace permitcheck::spec {
namespace {

using ::testing::HasSubstr;

using monitor_testing::legacy;
using monitor_testing::rev_d;

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
  EXPECT_THAT(std::string(z.status().message()), HasSubstr("legacy, rev-a, rev-b, rev-c, rev-d"));
}

TEST(Ruleset, AllRulesetsInRevisionOrderLegacyFirst) {
  const auto all = all_rulesets();
  ASSERT_EQ(all.size(), 5U);
  const char* names[] = {"legacy", "rev-a", "rev-b", "rev-c", "rev-d"};
  const RulesetId ids[] = {RulesetId::kLegacy, RulesetId::kRevA, RulesetId::kRevB,
                           RulesetId::kRevC, RulesetId::kRevD};
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i]->id, ids[i]);
    EXPECT_EQ(all[i]->name, names[i]);
    EXPECT_EQ(*parse_ruleset(names[i]), all[i]);
  }
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

TEST(Ruleset, InconsistentAndSkippedReleaseDecisions) {
  for (const Ruleset* r : all_rulesets()) {
    EXPECT_EQ(r->inconsistent, r->id == RulesetId::kRevC ? InconsistentHandling::kCloseConnection
                                                         : InconsistentHandling::kCorruptedData)
        << r->name;
    EXPECT_EQ(r->skipped_release,
              r->id == RulesetId::kRevB ? SkippedRelease::kAll : SkippedRelease::kDuplicateOnly)
        << r->name;
    EXPECT_FALSE(r->summary.empty()) << r->name;
  }
}

// Rulebook section 11: each earlier revision is rev-d but for the decisions behind its findings.
TEST(Ruleset, RevisionsDifferFromRevDOnlyAtTheirFindings) {
  auto same_as_rev_d_except = [](const Ruleset& r) {
    Ruleset x = r;
    x.id = rev_d().id;
    x.name = rev_d().name;
    x.summary = rev_d().summary;
    return x;
  };
  Ruleset a = same_as_rev_d_except(ruleset(RulesetId::kRevA));
  EXPECT_EQ(a.return_scope, ReturnScope::kSameConnection);  // F5
  a.return_scope = rev_d().return_scope;
  Ruleset b = same_as_rev_d_except(ruleset(RulesetId::kRevB));
  EXPECT_EQ(b.direct_returns, DirectReturns::kBesideBudget);                   // F1
  EXPECT_EQ(b.finalized_dispatchers, DispatcherCoverage::kPersistentSharedOnly);  // F2
  EXPECT_EQ(b.skipped_release, SkippedRelease::kAll);                          // F3
  b.direct_returns = rev_d().direct_returns;
  b.finalized_dispatchers = rev_d().finalized_dispatchers;
  b.skipped_release = rev_d().skipped_release;
  Ruleset c = same_as_rev_d_except(ruleset(RulesetId::kRevC));
  EXPECT_EQ(c.inconsistent, InconsistentHandling::kCloseConnection);  // F4
  c.inconsistent = rev_d().inconsistent;
  for (const Ruleset& x : {a, b, c}) {
    EXPECT_EQ(x.broker_sends_message_permits, rev_d().broker_sends_message_permits);
    EXPECT_EQ(x.consumer_debit, rev_d().consumer_debit);
    EXPECT_EQ(x.finalized_dispatchers, rev_d().finalized_dispatchers);
    EXPECT_EQ(x.client_reads_message_permits, rev_d().client_reads_message_permits);
    EXPECT_EQ(x.early_failure, rev_d().early_failure);
    EXPECT_EQ(x.batch_failure, rev_d().batch_failure);
    EXPECT_EQ(x.direct_returns, rev_d().direct_returns);
    EXPECT_EQ(x.before_start, rev_d().before_start);
    EXPECT_EQ(x.return_scope, rev_d().return_scope);
    EXPECT_EQ(x.flow_recheck, rev_d().flow_recheck);
    EXPECT_EQ(x.inconsistent, rev_d().inconsistent);
    EXPECT_EQ(x.skipped_release, rev_d().skipped_release);
    EXPECT_EQ(x.budget_tracked, rev_d().budget_tracked);
  }
}

}  // namespace
}  // namespace permitcheck::spec
