// The proofs for every parameter (conservation-all, finalization-all, isolation-all,
// induction-all): rev-d proved and marked unbounded, each proof not vacuous, and the earlier
// rulesets refuted with counterexamples the monitor re-checks to the rule of their finding.
#include <string>

#include "gtest/gtest.h"
#include "solver/prove.h"
#include "spec/ruleset.h"
#include "tests/solver/solver_testing.h"

namespace permitcheck::solver {
namespace {

const spec::Ruleset& rules(spec::RulesetId id) { return spec::ruleset(id); }

// Deterministic limits, no wall clock (issue 18), about ten times the largest rlimit count one
// query used (internal::rlimit_high_water(), PERMITCHECK_RLIMIT_REPORT=1). Proof and vacuity:
// conservation-all 38.8 million (the refinement at B <= 64), the other three under 50,000.
// Refutations (witness search and minimization): at most 3.33 million (isolation-all).
inline constexpr unsigned kRlimit = 400'000'000;
inline constexpr unsigned kRefutationRlimit = 40'000'000;

Result refute(Check check, spec::RulesetId id) {
  return prove(check, rules(id), proof_bounds(kRefutationRlimit));
}

void expect_proved_for_all(Check check) {
  const Result r = prove(check, rules(spec::RulesetId::kRevD), proof_bounds(kRlimit));
  EXPECT_TRUE(std::holds_alternative<Proved>(r.outcome)) << dump(r);
  EXPECT_FALSE(r.bounded) << dump(r);
  const VacuityReport v = check_vacuity(check, rules(spec::RulesetId::kRevD), proof_bounds(kRlimit));
  EXPECT_TRUE(v.ok()) << dump(v);
  EXPECT_GE(v.items.size(), 5u) << dump(v);
}

// Every witness of `r` re-checks to its own rule; `id` is among them with rule `rule`.
void expect_witness(const Result& r, std::string_view id, spec::RuleId rule) {
  ASSERT_NE(counterexample(r), nullptr) << dump(r);
  for (const Witness& w : counterexample(r)->witnesses) expect_reproduces(w, w.rule);
  const Witness* w = witness_for(r, id);
  ASSERT_NE(w, nullptr) << id << "\n" << dump(r);
  expect_reproduces(*w, rule);
}

TEST(SolverConservationAll, ProvedForRevDForEveryBAndP) {
  expect_proved_for_all(Check::kConservationAll);
}

TEST(SolverConservationAll, C7_K4_K7_LegacyCounterexamplesFromTheSummary) {
  const Result r = refute(Check::kConservationAll, spec::RulesetId::kLegacy);
  expect_witness(r, "L1", spec::RuleId::kC7);
  expect_witness(r, "L4", spec::RuleId::kC7);
  expect_witness(r, "L5", spec::RuleId::kK7);  // the parse failure laid out undeliverable
  expect_witness(r, "L3", spec::RuleId::kC7);
  expect_witness(r, "L9", spec::RuleId::kK4);
}

TEST(SolverConservationAll, K7_C6_S5_RevBAndRevCCounterexamples) {
  const Result b = refute(Check::kConservationAll, spec::RulesetId::kRevB);
  expect_witness(b, "F1", spec::RuleId::kK7);
  expect_witness(b, "F3", spec::RuleId::kS5);
  const Result c = refute(Check::kConservationAll, spec::RulesetId::kRevC);
  expect_witness(c, "F4", spec::RuleId::kC6);
}

TEST(SolverFinalizationAll, ProvedForRevDForAnyNumberOfEntries) {
  expect_proved_for_all(Check::kFinalizationAll);
}

TEST(SolverFinalizationAll, B4_B6_LegacyAndRevBRefuted) {
  expect_witness(refute(Check::kFinalizationAll, spec::RulesetId::kLegacy), "L8",
                 spec::RuleId::kB4);
  expect_witness(refute(Check::kFinalizationAll, spec::RulesetId::kRevB), "F2",
                 spec::RuleId::kB6);
}

TEST(SolverIsolationAll, ProvedForRevDForAnyIncarnations) {
  expect_proved_for_all(Check::kIsolationAll);
}

TEST(SolverIsolationAll, E3_N6_LegacyAndRevARefuted) {
  const Result legacy = refute(Check::kIsolationAll, spec::RulesetId::kLegacy);
  expect_witness(legacy, "L7", spec::RuleId::kE3);
  expect_witness(legacy, "L6", spec::RuleId::kE3);
  expect_witness(legacy, "L11", spec::RuleId::kN6);
  expect_witness(refute(Check::kIsolationAll, spec::RulesetId::kRevA), "F5",
                 spec::RuleId::kE3);
}

TEST(SolverInductionAll, ProvedForRevDForEveryB) {
  expect_proved_for_all(Check::kInductionAll);
}

TEST(SolverInductionAll, K7_LegacyAndRevBRefuted) {
  expect_witness(refute(Check::kInductionAll, spec::RulesetId::kLegacy), "L5",
                 spec::RuleId::kK7);
  const Result b = refute(Check::kInductionAll, spec::RulesetId::kRevB);
  ASSERT_NE(counterexample(b), nullptr) << dump(b);
  expect_reproduces(counterexample(b)->witnesses.front(), spec::RuleId::kK7);
}

}  // namespace
}  // namespace permitcheck::solver
