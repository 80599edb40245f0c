// Running the properties: one property run with a fixed seed and case budget, the legacy
// findings L1-L11 (each searched for, shrunk, written as a trace file and re-checked), the
// mutation score of the rev-d implementation, and the report that combines them.
//
//   PropertyParams params = PropertyParams::from_env(/*default_cases=*/200);
//   PropertyResult r = run_property({.name = "rev-d", .mode = impl::Mode::kRevD}, params);
//   if (!r.passed) std::cerr << format_failure(r);   // seed, shrunk steps, the problem
//
// Seeds and case counts: PERMITCHECK_PROPERTY_SEED and PERMITCHECK_PROPERTY_CASES override the
// defaults (so does RC_PARAMS="seed=... max_success=..."); the same seed and case count
// regenerate the same cases, so a printed failure reproduces.
#ifndef PERMITCHECK_PROPERTIES_RUNNER_H_
#define PERMITCHECK_PROPERTIES_RUNNER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "impl/config.h"
#include "properties/coverage.h"
#include "properties/harness.h"

namespace permitcheck::properties {

struct PropertyParams {
  std::uint64_t seed = 491;
  int cases = 200;       // cases of a conformance run
  int max_steps = 50;    // steps per case
  int find_cases = 4000; // budget for finding one legacy bug
  int mutant_cases = 5000;  // budget for killing one mutant
  int searches = 4;         // independent searches per legacy bug; the shortest one is kept
  bool shrink = true;

  // Defaults overridden by PERMITCHECK_PROPERTY_SEED, PERMITCHECK_PROPERTY_CASES,
  // PERMITCHECK_FIND_CASES, PERMITCHECK_MUTANT_CASES and RC_PARAMS (seed, max_success).
  static PropertyParams from_env(int default_cases);
};

struct PropertySpec {
  std::string name;  // shown in reports: "rev-d conformance"
  impl::Mode mode = impl::Mode::kRevD;
  impl::Mutant mutant = impl::Mutant::kNone;
  spec::RulesetId rules = spec::RulesetId::kRevD;  // what the monitor and model check
  Goal goal = Goal::conform();
  // Also rewrite message_permits to an in-range wrong value (C5; the review finding F4).
  bool in_range_corruption = false;
  // When set, every case's coverage is added here (check --coverage).
  Coverage* coverage = nullptr;
  // When set, called after each case that passed with the number passed so far (progress).
  std::function<void(int passed)> on_case_passed;
};

struct PropertyResult {
  std::string name;
  bool passed = false;        // no case failed the goal
  int cases = 0;              // cases run (the failing one included)
  int budget = 0;             // the case budget it ran with (with the seed: reproduces it)
  std::uint64_t seed = 0;
  int max_steps = 0;
  double seconds = 0;
  std::string error;          // a RapidCheck error or give-up, if any
  std::optional<CaseRecord> counterexample;  // the minimal failing case
};

PropertyResult run_property(const PropertySpec& spec, const PropertyParams& params);

// Seed, case count, configuration, shrunk steps, the problem and how to reproduce it.
std::string format_failure(const PropertyResult& result);

// ---- Legacy findings (rulebook section 10) ----
struct LegacyFinding {
  std::string id;                 // "L1"
  bool found = false;
  std::optional<spec::RuleId> rule;  // the rule the rev-d monitor reports
  bool deviation = false;         // reported as a known deviation (L10: X2)
  int steps = 0;                  // steps of the shrunk counterexample
  int cases = 0;                  // cases run until it was first found (over searches)
  std::uint64_t seed = 0;         // seed of the search whose counterexample is kept
  int kept_cases = 0;             // its case count (with the seed: how to reproduce it)
  int searches = 0;               // searches that found it
  double seconds = 0;             // every search and its shrinking
  std::string trace_file;         // the counterexample as a trace-format file
  bool recheck_ok = false;        // the file, read back, is reported with the same rule
  std::string recheck_text;       // what the re-check reported
  std::optional<CaseRecord> counterexample;
};

// Searches for L<id> in legacy mode (params.searches independent searches from seeds
// params.seed, params.seed + 1, ...), keeps the shortest shrunk counterexample and writes it
// to `dir`/L<id>.jsonl.
LegacyFinding find_legacy_bug(const std::string& id, const PropertyParams& params,
                              const std::string& dir);
std::vector<LegacyFinding> find_legacy_bugs(const PropertyParams& params, const std::string& dir);

// Writes a counterexample as a trace file (the trace, then `#` comment lines naming it, so its
// lines are the harness's) and re-checks the file with a fresh monitor: OK when `rule` is
// reported again (as a deviation when `deviation`), at the problem's line when it has one.
bool write_and_recheck(const CaseRecord& record, const std::string& path, spec::RuleId rule,
                       bool deviation, std::string* recheck_text);

// ---- Mutation score ----
struct MutantResult {
  impl::MutantInfo info;
  bool killed = false;
  std::string killed_by;  // "monitor K7", "model N5", ...
  int cases = 0;          // cases needed
  int steps = 0;          // counterexample length after shrinking
  double seconds = 0;
};

// Runs the rev-d conformance property against every seeded mutant (those whose name contains
// PERMITCHECK_MUTANT_FILTER, when set). Meaningful only when the implementation was built
// with mutants (impl::mutants_compiled_in()).
std::vector<MutantResult> run_mutation(const PropertyParams& params);
std::string format_mutation_table(const std::vector<MutantResult>& results);
double kill_ratio(const std::vector<MutantResult>& results);

// ---- The whole report (permitcheck-properties) ----
struct Report {
  PropertyResult rev_d;           // must pass
  PropertyResult legacy;          // the same property in legacy mode: must fail
  std::vector<LegacyFinding> findings;
  std::vector<MutantResult> mutants;
  bool mutants_run = false;

  bool ok() const;
};

std::string format_findings_table(const std::vector<LegacyFinding>& findings);
std::string format_report(const Report& report);

// What the whole report runs (options.h registers it as command-line options).
struct SuiteOptions {
  PropertyParams params;  // seed, cases, steps, find_cases, mutant_cases
  std::string out_dir;    // the legacy findings' counterexample trace files go here
  bool no_mutants = false;  // skip the mutation score
  bool no_legacy = false;   // skip the legacy findings L1-L11
};

// Runs the whole report and prints it to `out`. 0 when rev-d passes and legacy fails, every
// L1-L11 is found and re-checked (unless no_legacy) and at least 95% of the mutants are killed
// (when the build has mutants and not no_mutants); 1 otherwise.
int run_suite(const SuiteOptions& options, std::ostream& out);

}  // namespace permitcheck::properties

#endif  // PERMITCHECK_PROPERTIES_RUNNER_H_
