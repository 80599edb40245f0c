// permitcheck-properties: runs the model-based properties and prints the report: the rev-d
// verdict (cases, seed), the legacy findings L1-L11 (rule, steps after shrinking, trace file)
// and the mutation table. Exit status 0 when rev-d passes, legacy fails with every L1-L11
// found and re-checked, and at least 95% of the mutants are killed; 1 otherwise; 2 usage.
// `permitcheck check --suite` is the same report with the same options (properties/options.h).
//
//   permitcheck-properties --cases 2000 --seed 7 --out /tmp/cx
#include <iostream>
#include <string>

#include "CLI/CLI.hpp"
#include "properties/options.h"
#include "properties/runner.h"

int main(int argc, char** argv) {
  using namespace permitcheck::properties;
  SuiteOptions options{.params = PropertyParams::from_env(1000), .out_dir = PERMITCHECK_COUNTEREXAMPLE_DIR};

  CLI::App app{"Runs the model-based properties of the reference implementation"};
  add_run_options(app, options.params);
  add_suite_options(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return run_suite(options, std::cout);
}
