// Check 1, per-command conservation: rev-d is proved at Bmax 64, 256 and 1024; legacy fails
// with the catalogue's counterexamples, minimal, re-checked by the monitor against rev-d.
#include "gtest/gtest.h"
#include "solver/prove.h"
#include "spec/ruleset.h"
#include "tests/solver/solver_testing.h"

namespace permitcheck::solver {
namespace {

// Deterministic limits, no wall clock (issue 18), about ten times the largest rlimit count one
// query used (internal::rlimit_high_water(), PERMITCHECK_RLIMIT_REPORT=1): for the proofs,
// 18.0 million per query at B <= 1024, 2.2 million at 256, 1.0 million at 64.
inline constexpr unsigned kConservationRlimit = 200'000'000;

Result proved_at(int bmax) {
  Bounds b = proof_bounds(kConservationRlimit);
  b.bmax = bmax;
  return prove(Check::kConservation, rev_d(), b);
}

TEST(SolverConservation, ProvedForRevDAtB64) {
  const Result r = proved_at(64);
  EXPECT_TRUE(std::holds_alternative<Proved>(r.outcome)) << dump(r);
  EXPECT_EQ(r.bound, "B<=64");
  EXPECT_TRUE(as_expected(r));
}

TEST(SolverConservation, ProvedForRevDAtB256) {
  const Result r = proved_at(256);
  EXPECT_TRUE(std::holds_alternative<Proved>(r.outcome)) << dump(r);
}

TEST(SolverConservation, ProvedForRevDAtB1024) {
  const Result r = proved_at(1024);
  EXPECT_TRUE(std::holds_alternative<Proved>(r.outcome)) << dump(r);
  RecordProperty("seconds", std::to_string(r.seconds));
}

// The other popcount encoding proves the same (bench/solver_bench.cc compares their growth).
TEST(SolverConservation, ProvedWithBitSumPopcount) {
  Bounds b = proof_bounds(20'000'000);  // measured 2.0 M
  b.bmax = 32;
  b.bit_sum_popcount = true;
  const Result r = prove(Check::kConservation, rev_d(), b);
  EXPECT_TRUE(std::holds_alternative<Proved>(r.outcome)) << dump(r);
}

// Every legacy row the check covers, at the default bounds, from one run of the check: each
// reproduces through the monitor (after a trace-format round trip) with the catalogue's rule,
// and its numbers in words are pinned and minimal: the smallest B and P that show the bug.
TEST(SolverConservation,
     L1_L2_L3_L4_L5_L9_LegacyCounterexamplesAreMinimalAndReproduceThroughMonitor) {
  const Result r = prove(Check::kConservation, legacy(), proof_bounds(100'000'000));  // 9.4 M
  ASSERT_NE(counterexample(r), nullptr) << dump(r);
  EXPECT_TRUE(as_expected(r));
  for (const std::string_view id : {"L1", "L2", "L3", "L4", "L5", "L9"}) {
    const Witness* w = witness_for(r, id);
    ASSERT_NE(w, nullptr) << "no witness for " << id << "\n" << dump(r);
    expect_reproduces(*w, catalogue_rule(id));
    EXPECT_TRUE(w->minimal) << id;
  }
  // Every witness, catalogue row or not, is a violation the monitor confirms.
  for (const Witness& w : counterexample(r)->witnesses) {
    EXPECT_FALSE(recheck(w).violations.empty()) << w.situation << ": " << w.words;
  }
  EXPECT_EQ(witness_for(r, "L1")->words,
            "B=2 (batch), message_permits=2, ack_set absent, checksum fails, returned 1, P=2 "
            "(1 lost)");
  EXPECT_EQ(witness_for(r, "L4")->words,
            "B=2 (batch), message_permits=2, ack_set absent, index 0 batch parse fails, "
            "returned 1, P=2 (1 lost)");
  EXPECT_EQ(witness_for(r, "L5")->words,
            "B=2 (batch), message_permits=1, acknowledged {1}, index 1 batch parse fails, returned 2, "
            "P=1 (1 over-granted)");
  EXPECT_EQ(witness_for(r, "L9")->words,
            "B=1 (single message), message_permits=1, ack_set absent, index 0 before start, "
            "returned 0, P=1 (1 lost)");
}

}  // namespace
}  // namespace permitcheck::solver
