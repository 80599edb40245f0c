// The mutation score: the rev-d conformance property run against every seeded single-point
// mutant of the implementation (test-only build permitcheck_impl_mutants) must kill at least
// 95% of them. Prints the table: mutant, rule, killed by, cases needed, counterexample length.
#include <iostream>

#include "gtest/gtest.h"
#include "impl/mutant.h"
#include "properties/runner.h"

namespace permitcheck::properties {
namespace {

TEST(MutationScore, B4_B6_K5_N5_PropertiesKillAtLeast95PercentOfMutants) {
  ASSERT_TRUE(impl::mutants_compiled_in()) << "linked against the default implementation";
  ASSERT_GE(impl::all_mutants().size(), 25u);
  const PropertyParams params = PropertyParams::from_env(300);
  const std::vector<MutantResult> results = run_mutation(params);
  std::cout << format_mutation_table(results);
  EXPECT_GE(kill_ratio(results), 0.95) << format_mutation_table(results);
}

TEST(MutationScore, NoMutantIsActiveByDefault) {
  const PropertyParams params = PropertyParams::from_env(50);
  const PropertyResult r = run_property({.name = "rev-d, mutant build, no mutant"}, params);
  EXPECT_TRUE(r.passed) << format_failure(r);
}

}  // namespace
}  // namespace permitcheck::properties
