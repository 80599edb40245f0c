// Check 2, finalization: rev-d is proved for every dispatcher kind; legacy debits the
// pre-admission sum (L8) for every dispatcher, re-checked by the monitor as B4.
#include <set>

#include "gtest/gtest.h"
#include "solver/prove.h"
#include "spec/finalize.h"
#include "spec/ruleset.h"
#include "tests/solver/solver_testing.h"

namespace permitcheck::solver {
namespace {

// Deterministic limits, no wall clock (issue 18): each test's rlimit per query is about ten
// times the largest one query of it used (internal::rlimit_high_water(), measured with
// PERMITCHECK_RLIMIT_REPORT=1).
TEST(SolverFinalization, ProvedForRevDEveryDispatcher) {
  const Result r = prove(Check::kFinalization, rev_d(), proof_bounds(5'000'000));  // 0.42 M
  EXPECT_TRUE(std::holds_alternative<Proved>(r.outcome)) << dump(r);
  EXPECT_EQ(r.bound, "k<=4, 64-bit ack_set, 7 dispatchers");
}

TEST(SolverFinalization, ProvedForRevDWithEightEntries) {
  Bounds b = proof_bounds(25'000'000);  // measured 2.29 M
  b.kmax = 8;
  const Result r = prove(Check::kFinalization, rev_d(), b);
  EXPECT_TRUE(std::holds_alternative<Proved>(r.outcome)) << dump(r);
}

TEST(SolverFinalization, ProvedForRevDAtB1024) {
  Bounds b = proof_bounds(200'000'000);  // measured 20.5 M
  b.bmax = 1024;
  const Result r = prove(Check::kFinalization, rev_d(), b);
  EXPECT_TRUE(std::holds_alternative<Proved>(r.outcome)) << dump(r);
}

TEST(SolverFinalization, L8_LegacyCounterexampleForEveryDispatcher) {
  const Result r = prove(Check::kFinalization, legacy(), proof_bounds(15'000'000));  // 1.22 M
  const Counterexample* c = counterexample(r);
  ASSERT_NE(c, nullptr) << dump(r);
  ASSERT_EQ(c->witnesses.size(), spec::all_dispatcher_kinds().size()) << dump(r);
  std::set<std::string> situations;
  for (const Witness& w : c->witnesses) {
    EXPECT_EQ(w.id, "L8");
    expect_reproduces(w, catalogue_rule("L8"));
    EXPECT_TRUE(w.minimal);
    situations.insert(w.situation);
  }
  EXPECT_EQ(situations.size(), spec::all_dispatcher_kinds().size());
  const Witness* shared = nullptr;
  for (const Witness& w : c->witnesses) {
    if (w.situation == "send to persistent_shared") shared = &w;
  }
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(shared->words,
            "persistent_shared: 2 entries (#1 B=1 ack_set absent admitted; #2 B=1 ack_set absent "
            "rejected by pending-ack admission); consumer debited 2, aggregate debited 2, 1 "
            "command sent, finalized ΣP=1 (1 permit lost)");
}

}  // namespace
}  // namespace permitcheck::solver
