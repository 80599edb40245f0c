// The options of the properties report (the suite: rev-d passes, legacy fails, L1-L11 found,
// shrunk, written and re-checked, the mutation table), registered by one function on both
// front doors: `permitcheck-properties` (properties/main.cc) and `permitcheck check --suite`
// (cli/check.cc). One registration is what keeps the two alike in name, meaning, default and
// accepted range; tests/cli/check_options_test.cc compares their --help.
//
//   SuiteOptions o{.params = PropertyParams::from_env(1000), .out_dir = "cx"};
//   CLI::App app;
//   add_run_options(app, o.params);     // --seed, --cases, --steps
//   add_suite_options(app, o);          // --find-cases, --mutant-cases, --out, --no-mutants, --no-legacy
//   app.parse(argc, argv);
//   int code = run_suite(o, std::cout); // 0 the report is OK, 1 not (runner.h)
//
// Header-only, so the properties library itself does not depend on CLI11.
#ifndef PERMITCHECK_PROPERTIES_OPTIONS_H_
#define PERMITCHECK_PROPERTIES_OPTIONS_H_

#include <cstdint>
#include <vector>

#include "CLI/CLI.hpp"
#include "properties/runner.h"

namespace permitcheck::properties {

// Accepted ranges, the same on both front doors.
inline constexpr int kMaxCases = 1000000000;
inline constexpr int kMaxSteps = 100000;

// --seed, --cases, --steps into `params` (seed, cases, max_steps). `permitcheck check` has its
// own three (shared with its single-property mode) with these ranges.
inline void add_run_options(CLI::App& app, PropertyParams& params) {
  app.add_option("--seed", params.seed, "RapidCheck seed")->capture_default_str();
  app.add_option("--cases", params.cases, "cases of the rev-d and legacy property")
      ->check(CLI::Range(1, kMaxCases))
      ->capture_default_str();
  app.add_option("--steps", params.max_steps, "steps per case at most")
      ->check(CLI::Range(1, kMaxSteps))
      ->capture_default_str();
}

// The options only the suite has; returns them (so `check` can make them need --suite).
inline std::vector<CLI::Option*> add_suite_options(CLI::App& app, SuiteOptions& o) {
  return {
      app.add_option("--find-cases", o.params.find_cases, "case budget to find each of L1-L11")
          ->check(CLI::Range(1, kMaxCases))
          ->capture_default_str(),
      app.add_option("--mutant-cases", o.params.mutant_cases, "case budget to kill each mutant")
          ->check(CLI::Range(1, kMaxCases))
          ->capture_default_str(),
      app.add_option("--out", o.out_dir, "directory for counterexample trace files")
          ->capture_default_str(),
      app.add_flag("--no-mutants", o.no_mutants, "skip the mutation score"),
      app.add_flag("--no-legacy", o.no_legacy, "skip the legacy findings"),
  };
}

}  // namespace permitcheck::properties

#endif  // PERMITCHECK_PROPERTIES_OPTIONS_H_
