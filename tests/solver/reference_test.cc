// The solver's reference is independent of what it checks (issue 19): rev-d's decisions are
// written out in the solver, so a held-out change of spec's rev-d is refuted, not "proved".
#include "gtest/gtest.h"
#include "solver/internal/checks.h"
#include "solver/prove.h"
#include "spec/ruleset.h"
#include "tests/solver/solver_testing.h"

namespace permitcheck::solver {
namespace {

// Rev-d with its inconsistent-data decision changed to what rev-c does: close the connection.
spec::Ruleset closing_rev_d() {
  spec::Ruleset r = spec::ruleset(spec::RulesetId::kRevD);
  r.inconsistent = spec::InconsistentHandling::kCloseConnection;
  return r;
}

void expect_refuted_with_c6(const Result& r) {
  ASSERT_NE(counterexample(r), nullptr) << dump(r);
  EXPECT_FALSE(as_expected(r)) << dump(r);  // a "rev-d" that is not proved
  bool c6 = false;
  for (const Witness& w : counterexample(r)->witnesses) {
    expect_reproduces(w, w.rule);
    c6 = c6 || w.rule == spec::RuleId::kC6;
  }
  EXPECT_TRUE(c6) << dump(r);
}

// Deterministic limits, no wall clock (issue 18): about ten times the largest rlimit count one
// query used (internal::rlimit_high_water(), PERMITCHECK_RLIMIT_REPORT=1), at least a million.
TEST(SolverReference, HeldOutCloseConnectionRevDRefutedByConservation) {
  expect_refuted_with_c6(
      prove(Check::kConservation, closing_rev_d(), proof_bounds(150'000'000)));  // 13.8 M
}

TEST(SolverReference, HeldOutCloseConnectionRevDRefutedByConservationAll) {
  expect_refuted_with_c6(
      prove(Check::kConservationAll, closing_rev_d(), proof_bounds(1'000'000)));  // 3,231
}

TEST(SolverReference, LiteralReferenceIsNotTheSpecObject) {
  const spec::Ruleset& ref = internal::reference_rules();
  const spec::Ruleset& spec_rev_d = spec::ruleset(spec::RulesetId::kRevD);
  EXPECT_NE(&ref, &spec_rev_d);
  // Today's spec agrees with the rulebook's decisions as the solver writes them out.
  EXPECT_EQ(ref.inconsistent, spec_rev_d.inconsistent);
  EXPECT_EQ(ref.direct_returns, spec_rev_d.direct_returns);
  EXPECT_EQ(ref.return_scope, spec_rev_d.return_scope);
  EXPECT_EQ(ref.flow_recheck, spec_rev_d.flow_recheck);
  EXPECT_EQ(ref.consumer_debit, spec_rev_d.consumer_debit);
  EXPECT_EQ(ref.finalized_dispatchers, spec_rev_d.finalized_dispatchers);
  EXPECT_EQ(ref.early_failure, spec_rev_d.early_failure);
  EXPECT_EQ(ref.batch_failure, spec_rev_d.batch_failure);
  EXPECT_EQ(ref.before_start, spec_rev_d.before_start);
  EXPECT_EQ(ref.skipped_release, spec_rev_d.skipped_release);
  EXPECT_EQ(ref.budget_tracked, spec_rev_d.budget_tracked);
  EXPECT_EQ(ref.client_reads_message_permits, spec_rev_d.client_reads_message_permits);
  EXPECT_EQ(ref.broker_sends_message_permits, spec_rev_d.broker_sends_message_permits);
}

}  // namespace
}  // namespace permitcheck::solver
