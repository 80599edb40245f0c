// The mutation score: the rev-d conformance property run against every seeded single-point
// mutant of the implementation (test-only build permitcheck_impl_mutants) must kill at least
// 95% of them. Prints the table: mutant, rule, killed by, cases needed, counterexample length.
#include <cstdlib>
#include <iostream>
#include <string>

#include "gtest/gtest.h"
#include "impl/mutant.h"
#include "properties/runner.h"

namespace permitcheck::properties {
namespace {

TEST(MutationScore, PropertiesKillAtLeast95PercentOfMutants) {
  ASSERT_TRUE(impl::mutants_compiled_in()) << "linked against the default implementation";
  ASSERT_GE(impl::all_mutants().size(), 25u);
  const PropertyParams params = PropertyParams::from_env(300);
  const std::vector<MutantResult> results = run_mutation(params);
  std::cout << format_mutation_table(results);
  EXPECT_GE(kill_ratio(results), 0.95) << format_mutation_table(results);
}

// The mutants that break B5 (the unacked count) and M2 (the stale-epoch discard), rules no
// check reports by their own ID, are each killed: the property catches an implementation that
// breaks them.
TEST(MutationScore, B5_M2_EachMutantBreakingTheRuleIsKilled) {
  ASSERT_TRUE(impl::mutants_compiled_in()) << "linked against the default implementation";
  const PropertyParams params = PropertyParams::from_env(300);
  int checked = 0;
  for (const impl::MutantInfo& m : impl::all_mutants()) {
    if (m.rule != "B5" && m.rule != "M2") continue;
    SCOPED_TRACE(std::string(m.name));
    ::setenv("PERMITCHECK_MUTANT_FILTER", std::string(m.name).c_str(), 1);
    const std::vector<MutantResult> results = run_mutation(params);
    ::unsetenv("PERMITCHECK_MUTANT_FILTER");
    ASSERT_EQ(results.size(), 1u);
    EXPECT_TRUE(results[0].killed) << format_mutation_table(results);
    ++checked;
  }
  EXPECT_GE(checked, 3);  // unacked_uses_batch_size (B5); stale_epoch_to_current, stale_keeps_gauges (M2)
}

TEST(MutationScore, NoMutantIsActiveByDefault) {
  const PropertyParams params = PropertyParams::from_env(50);
  const PropertyResult r = run_property({.name = "rev-d, mutant build, no mutant"}, params);
  EXPECT_TRUE(r.passed) << format_failure(r);
}

}  // namespace
}  // namespace permitcheck::properties
