// The specification's self-check: which tests pin each rule, and whether the legacy catalogue
// (rulebook section 10) separates the rulesets as the rulebook says.
//
// A rule is covered when at least one test naming it passed and none failed (test_names.h
// says what "naming" means). A catalogue row is OK when its legacy trace passes the legacy
// ruleset, the same trace checked against rev-d reports the row's rule (as a known deviation
// when the row says so), and its correct trace passes rev-d. The self-check passes when every
// rule is covered, no test failed at all, the catalogue is not empty and every row is OK.
//
//   absl::StatusOr<TestResults> results = read_gtest_results(dir);
//   SelfCheck check = run_selfcheck(*results);
//   std::cout << format_text(check);  return check.ok() ? 0 : 1;
#ifndef PERMITCHECK_CLI_SELFCHECK_H_
#define PERMITCHECK_CLI_SELFCHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cli/gtest_results.h"
#include "spec/monitor.h"
#include "spec/rule_id.h"

namespace permitcheck::cli {

// The tests that name one rule.
struct RuleRow {
  const spec::RuleInfo* rule;
  int passed = 0;
  int failed = 0;
  std::vector<std::string> examples;  // a few full test names, failing ones first

  int tests() const { return passed + failed; }
  bool ok() const { return passed > 0 && failed == 0; }
};

// One legacy catalogue entry, checked three ways.
struct CatalogueRow {
  std::string id;         // "L1"
  std::string situation;
  std::int64_t legacy_value = 0;
  std::int64_t correct_value = 0;
  spec::RuleId rev_d_rule;
  bool rev_d_deviation = false;
  spec::MonitorReport legacy_under_legacy;  // expected: no violation
  spec::MonitorReport legacy_under_rev_d;   // expected: rev_d_rule reported
  spec::MonitorReport correct_under_rev_d;  // expected: no violation

  bool legacy_ok() const { return legacy_under_legacy.violations.empty(); }
  bool rev_d_ok() const;
  bool correct_ok() const { return correct_under_rev_d.violations.empty(); }
  bool ok() const { return legacy_ok() && rev_d_ok() && correct_ok(); }
};

struct SelfCheck {
  std::vector<std::string> result_files;  // file names, in reading order
  int tests_passed = 0;
  int tests_failed = 0;
  int tests_not_run = 0;                  // skipped
  std::vector<TestResult> failed_tests;   // every failing test, pinning a rule or not
  std::vector<RuleRow> rules;             // spec::all_rules() order
  std::vector<CatalogueRow> catalogue;    // spec::legacy_catalogue() order

  bool ok() const;
};

// Builds the report from test results and the specification's own catalogue and monitor.
SelfCheck run_selfcheck(const TestResults& results);

// Human-readable tables and a closing verdict line.
std::string format_text(const SelfCheck& check);

// The same content as one JSON object (see README.md, "The self-check report").
std::string format_json(const SelfCheck& check);

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_SELFCHECK_H_
