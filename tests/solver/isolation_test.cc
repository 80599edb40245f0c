// Check 3, incarnation isolation by bounded model checking: rev-d is proved to depth 12 (and
// 16); legacy credits old units to the replacement (L6, L7) and writes old Flows after the
// replacement's Subscribe (L11), each a shortest trace the monitor re-checks.
#include "gtest/gtest.h"
#include "solver/prove.h"
#include "spec/ruleset.h"
#include "tests/solver/solver_testing.h"

namespace permitcheck::solver {
namespace {

// Deterministic limits, no wall clock (issue 18): each test's rlimit per query is about ten
// times the largest one query of it used (internal::rlimit_high_water(), measured with
// PERMITCHECK_RLIMIT_REPORT=1).
TEST(SolverIsolation, ProvedForRevDAtDepth12) {
  const Result r = prove(Check::kIsolation, rev_d(), proof_bounds(20'000'000));  // 1.79 M
  EXPECT_TRUE(std::holds_alternative<Proved>(r.outcome)) << dump(r);
  EXPECT_EQ(r.bound, "depth 12, Q<=8");
}

TEST(SolverIsolation, ProvedForRevDAtDepth16) {
  Bounds b = proof_bounds(30'000'000);  // measured 2.55 M
  b.depth = 16;
  const Result r = prove(Check::kIsolation, rev_d(), b);
  EXPECT_TRUE(std::holds_alternative<Proved>(r.outcome)) << dump(r);
}

TEST(SolverIsolation, L6_L7_L11_LegacyCounterexamplesReproduceThroughMonitor) {
  const Result r = prove(Check::kIsolation, legacy(), proof_bounds(15'000'000));  // 1.22 M
  ASSERT_NE(counterexample(r), nullptr) << dump(r);
  for (const std::string_view id : {"L6", "L7", "L11"}) {
    const Witness* w = witness_for(r, id);
    ASSERT_NE(w, nullptr) << "no witness for " << id << "\n" << dump(r);
    expect_reproduces(*w, catalogue_rule(id));
  }
  // Shortest interleavings: hand-off, replacement, late return (and, for L11, the Flow task
  // queued by the return before the replacement).
  EXPECT_EQ(witness_for(r, "L7")->words,
            "Q=1, T=1, 4 steps: subscribe_ok(inc 1, consumer 0), deliver(inc 1, consumer 0), "
            "close_consumer(consumer 0), return(inc 1, consumer 0)");
  EXPECT_EQ(witness_for(r, "L6")->words,
            "Q=1, T=1, 4 steps: subscribe_ok(inc 1, consumer 0), deliver(inc 1, consumer 0), "
            "reconnect, return(inc 1, consumer 0)");
  EXPECT_EQ(witness_for(r, "L11")->words,
            "Q=1, T=1, 5 steps: subscribe_ok(inc 1, consumer 0), deliver(inc 1, consumer 0), "
            "return(inc 1, consumer 0), close_consumer(consumer 0), flow_task(inc 1, consumer 0)");
}

}  // namespace
}  // namespace permitcheck::solver
