// Trust in the proofs: for each check, its assumptions are satisfiable (every class of
// situation it quantifies over is reachable) and a deliberately false variant of each property
// is refuted, so "proved" never stems from an empty or contradictory encoding.
#include <string>

#include "gtest/gtest.h"
#include "solver/prove.h"
#include "spec/ruleset.h"
#include "tests/solver/solver_testing.h"

namespace permitcheck::solver {
namespace {

// Deterministic limits, no wall clock (issue 18): `rlimit` per query is about ten times the
// largest one query used (internal::rlimit_high_water(), PERMITCHECK_RLIMIT_REPORT=1), at least
// a million.
void expect_not_vacuous(Check check, std::size_t at_least, unsigned rlimit) {
  const VacuityReport r = check_vacuity(check, rev_d(), proof_bounds(rlimit));
  EXPECT_TRUE(r.ok()) << dump(r);
  EXPECT_GE(r.items.size(), at_least) << dump(r);
  bool assumption = false;
  bool false_variant = false;
  for (const VacuityItem& i : r.items) {
    assumption = assumption || i.what.rfind("assumptions:", 0) == 0;
    false_variant = false_variant || i.what.rfind("false variant refuted:", 0) == 0;
  }
  EXPECT_TRUE(assumption && false_variant) << dump(r);
}

TEST(SolverVacuity, ConservationIsNotVacuous) {
  expect_not_vacuous(Check::kConservation, 20, 12'000'000);  // measured 1.20 M
}

TEST(SolverVacuity, FinalizationIsNotVacuous) {
  expect_not_vacuous(Check::kFinalization, 10, 10'000'000);  // measured 0.90 M
}

TEST(SolverVacuity, IsolationIsNotVacuous) {
  expect_not_vacuous(Check::kIsolation, 8, 15'000'000);  // measured 1.39 M
}

TEST(SolverVacuity, InductionIsNotVacuous) {
  expect_not_vacuous(Check::kInduction, 10, 1'000'000);  // measured 18,762
}

}  // namespace
}  // namespace permitcheck::solver
