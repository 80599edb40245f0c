// A query that hits its limit answers unknown: never a false "proved".
#include "gtest/gtest.h"
#include "solver/prove.h"
#include "spec/ruleset.h"
#include "tests/solver/solver_testing.h"

namespace permitcheck::solver {
namespace {

TEST(SolverLimits, TinyTimeoutYieldsUnknownNeverProved) {
  Bounds b;
  b.bmax = 1024;
  b.timeout = std::chrono::milliseconds(1);
  const Result r = prove(Check::kConservation, rev_d(), b);
  EXPECT_TRUE(std::holds_alternative<Unknown>(r.outcome)) << dump(r);
  EXPECT_FALSE(as_expected(r));
}

// A deterministic resource limit: every check gives up, and none claims a proof.
TEST(SolverLimits, TinyResourceLimitNeverProved) {
  Bounds b;
  b.rlimit = 1;
  for (const Check c : all_checks()) {
    const Result r = prove(c, rev_d(), b);
    EXPECT_FALSE(std::holds_alternative<Proved>(r.outcome)) << dump(r);
    EXPECT_TRUE(std::holds_alternative<Unknown>(r.outcome)) << dump(r);
  }
}

TEST(SolverLimits, InvalidBoundsYieldUnknown) {
  Bounds b;
  b.bmax = 4;
  const Result r = prove(Check::kConservation, rev_d(), b);
  ASSERT_TRUE(std::holds_alternative<Unknown>(r.outcome)) << dump(r);
  EXPECT_NE(std::get<Unknown>(r.outcome).reason.find("invalid bounds"), std::string::npos);
}

}  // namespace
}  // namespace permitcheck::solver
