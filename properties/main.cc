// permitcheck-properties: runs the model-based properties and prints the report: the rev-d
// verdict (cases, seed), the legacy findings L1-L11 (rule, steps after shrinking, trace file)
// and the mutation table. Exit status 0 when rev-d passes, legacy fails with every L1-L11
// found and re-checked, and at least 95% of the mutants are killed; 1 otherwise.
//
//   permitcheck-properties --cases 2000 --seed 7 --out /tmp/cx
#include <iostream>
#include <string>

#include "CLI/CLI.hpp"
#include "impl/mutant.h"
#include "properties/runner.h"

int main(int argc, char** argv) {
  using namespace permitcheck::properties;
  PropertyParams params = PropertyParams::from_env(1000);
  std::string out_dir = PERMITCHECK_COUNTEREXAMPLE_DIR;
  bool no_mutants = false;
  bool no_legacy = false;

  CLI::App app{"Runs the model-based properties of the reference implementation"};
  app.add_option("--seed", params.seed, "RapidCheck seed")->capture_default_str();
  app.add_option("--cases", params.cases, "cases of the rev-d and legacy property")
      ->capture_default_str();
  app.add_option("--steps", params.max_steps, "steps per case at most")->capture_default_str();
  app.add_option("--find-cases", params.find_cases, "case budget to find each of L1-L11")
      ->capture_default_str();
  app.add_option("--mutant-cases", params.mutant_cases, "case budget to kill each mutant")
      ->capture_default_str();
  app.add_option("--out", out_dir, "directory for counterexample trace files")
      ->capture_default_str();
  app.add_flag("--no-mutants", no_mutants, "skip the mutation score");
  app.add_flag("--no-legacy", no_legacy, "skip the legacy findings");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  Report report;
  report.rev_d = run_property({.name = "rev-d conformance"}, params);
  report.legacy = run_property({.name = "legacy conformance", .mode = permitcheck::impl::Mode::kLegacy},
                               params);
  if (!no_legacy) report.findings = find_legacy_bugs(params, out_dir);
  if (!no_mutants && permitcheck::impl::mutants_compiled_in()) {
    report.mutants = run_mutation(params);
    report.mutants_run = true;
  }
  std::cout << format_report(report);
  if (no_legacy) return report.rev_d.passed && !report.legacy.passed ? 0 : 1;
  return report.ok() ? 0 : 1;
}
