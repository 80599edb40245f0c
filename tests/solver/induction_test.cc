// Check 4, the conservation invariant behind E5 by k-induction: rev-d is proved for runs of
// every length (k = 1 and k = 2); legacy breaks conservation, shown by the shortest runs, each
// drained to quiescence so the monitor also reports E5 where the accumulator shows the loss.
#include <algorithm>

#include "gtest/gtest.h"
#include "solver/prove.h"
#include "spec/ruleset.h"
#include "tests/solver/solver_testing.h"

namespace permitcheck::solver {
namespace {

bool reports(const spec::MonitorReport& r, spec::RuleId rule) {
  return std::any_of(r.violations.begin(), r.violations.end(),
                     [&](const spec::Finding& f) { return f.rule == rule; });
}

// Deterministic limits, no wall clock (issue 18): each test's rlimit per query is about ten
// times the largest one query of it used (internal::rlimit_high_water(), measured with
// PERMITCHECK_RLIMIT_REPORT=1).
TEST(SolverInduction, ProvedForRevDByOneInduction) {
  const Result r = prove(Check::kInduction, rev_d(), proof_bounds(25'000'000));  // 2.34 M
  EXPECT_TRUE(std::holds_alternative<Proved>(r.outcome)) << dump(r);
  EXPECT_EQ(r.bound, "k=1, B<=8, any Q");
}

TEST(SolverInduction, ProvedForRevDByTwoInduction) {
  Bounds b = proof_bounds(25'000'000);  // measured 2.13 M
  b.induction_k = 2;
  const Result r = prove(Check::kInduction, rev_d(), b);
  EXPECT_TRUE(std::holds_alternative<Proved>(r.outcome)) << dump(r);
}

TEST(SolverInduction, E5_E3_N6_LegacyBreaksConservationWithShortestRuns) {
  const Result r = prove(Check::kInduction, legacy(), proof_bounds(20'000'000));  // 1.75 M
  const Counterexample* c = counterexample(r);
  ASSERT_NE(c, nullptr) << dump(r);
  ASSERT_EQ(c->witnesses.size(), 4u) << dump(r);
  for (const Witness& w : c->witnesses) {
    const spec::MonitorReport report = recheck(w);
    ASSERT_FALSE(report.violations.empty()) << w.words;
    EXPECT_EQ(report.violations.front().rule, w.rule) << w.words;
    if (w.situation == "a command's handling loses units") {
      EXPECT_TRUE(reports(report, spec::RuleId::kE5)) << w.words;
    }
    if (!w.id.empty()) {
      EXPECT_EQ(w.rule, catalogue_rule(w.id)) << w.id << " " << w.words;
    }
  }
  const Witness* l11 = witness_for(r, "L11");
  ASSERT_NE(l11, nullptr) << dump(r);
  expect_reproduces(*l11, spec::RuleId::kN6);
  const Witness* l7 = witness_for(r, "L7");
  ASSERT_NE(l7, nullptr) << dump(r);
  expect_reproduces(*l7, spec::RuleId::kE3);
}

}  // namespace
}  // namespace permitcheck::solver
