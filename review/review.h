// Design review of the proposal's revisions: every engine run on every revision, finding the
// review findings F1-F5 (rulebook section 11) where the revision had them, and not in rev-d.
//
// Two engines look for each finding: the model-based properties (the reference implementation
// running the revision, judged by the rev-d monitor, searched, shrunk and re-checked from its
// trace file) and the solver (the Z3 check that covers the finding, run on the revision's
// ruleset; its witness rows name the finding).
//
//   Options o;                                       // CI budgets, seed 491
//   std::vector<Search> t = findings_table(o);       // F1-F5 x {revision, rev-d} x engines
//   std::cout << format_findings_table(t);           // found in the revision, gone in rev-d?
//   Comparison c = compare(spec::RulesetId::kRevB, spec::RulesetId::kRevC, o);
//   std::cout << format_comparison(c);               // what rev-c breaks and fixes
#ifndef PERMITCHECK_REVIEW_REVIEW_H_
#define PERMITCHECK_REVIEW_REVIEW_H_

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "properties/runner.h"
#include "solver/prove.h"
#include "spec/rule_id.h"
#include "spec/ruleset.h"

namespace permitcheck::review {

// One review finding of rulebook section 11.
struct ReviewFinding {
  std::string_view id;         // "F1"
  spec::RulesetId revision;    // the revision with the defect
  std::string_view title;      // "double return"
  std::string_view situation;  // the counterexample the rulebook asks for
  solver::Check check;         // the solver check that covers it
};

// F1-F5 (F6 is allowed by the fallback, not a defect: it is documented, never flagged).
std::span<const ReviewFinding> review_findings();
const ReviewFinding* find_review_finding(std::string_view id);

enum class Engine { kProperties, kSolver };
std::string_view engine_name(Engine engine);  // "properties", "solver"

// One engine looking for one finding in one ruleset.
struct Search {
  std::string finding;                 // "F1"
  spec::RulesetId ruleset = spec::RulesetId::kRevD;
  Engine engine = Engine::kProperties;
  bool found = false;
  std::optional<spec::RuleId> rule;    // what the rev-d monitor reports for it
  int cases = 0;                       // properties: cases run (until found, or the budget)
  double seconds = 0;                  // wall time of the search (solver: the whole check)
  int length = 0;                      // counterexample: steps (properties), events (solver)
  std::string counterexample;          // in words: the shrunk steps, or the witness
  std::string finding_text;            // the monitor's finding on it
  std::string trace_file;              // written when Options::trace_dir is set
  bool recheck_ok = false;             // the file, read back, is reported with the same rule
  std::string note;                    // an unknown solver answer, a property error
};

struct Options {
  properties::PropertyParams params;  // seed; find_cases is the budget of each search
  int searches = 2;                   // independent property searches; the shortest is kept
  solver::Bounds bounds;              // conservation B<=bmax etc.
  // The solver checks review_ruleset() runs (the findings' own checks always run). Induction
  // is the slow one on revision B (minutes: it searches every class of its counterexamples).
  std::vector<solver::Check> checks = {solver::all_checks().begin(), solver::all_checks().end()};
  std::string trace_dir;              // counterexample files ("" = none)

  // CI defaults (fewer cases when `sanitized`), overridden by the PERMITCHECK_* variables
  // of properties::PropertyParams::from_env.
  static Options defaults(bool sanitized = false);
};

// The property search for `finding` with the implementation running `ruleset`.
Search search_properties(const ReviewFinding& finding, spec::RulesetId ruleset, const Options& o);

// The solver's answer for `finding` under `ruleset`, from a result of the finding's check
// (prove(finding.check, ruleset(ruleset), o.bounds)).
Search search_solver(const ReviewFinding& finding, const solver::Result& result, const Options& o);

// Every finding in its revision and in rev-d, with both engines (20 searches).
std::vector<Search> findings_table(const Options& o);

// True when each finding is found by both engines in its revision and by neither in rev-d.
bool findings_as_expected(const std::vector<Search>& table);

// finding, revision, engine, found, cases or seconds, counterexample length; then the
// counterexamples of the revisions, and a closing verdict line.
std::string format_findings_table(const std::vector<Search>& table);
std::string format_findings_json(const std::vector<Search>& table);

// ---- permitcheck review --from A --to B ----

// What one ruleset shows, over every engine: the findings it has, and the solver's checks.
struct RulesetReview {
  spec::RulesetId ruleset = spec::RulesetId::kRevD;
  std::vector<Search> findings;          // F1-F5, both engines
  std::vector<solver::Result> checks;    // the four solver checks
};

// A difference between two rulesets: a finding, or a solver counterexample row.
struct Change {
  std::string key;       // "F2", or "conservation: single message duplicate"
  std::string engines;   // "properties+solver"
  std::string example;   // the minimal counterexample, in words, of the ruleset that has it
  std::string rule;      // the rev-d rule it breaks
};

struct Comparison {
  RulesetReview from;
  RulesetReview to;
  std::vector<Change> breaks;  // problems `to` has that `from` had not
  std::vector<Change> fixes;   // problems `from` had that `to` has not
  std::vector<Change> kept;    // problems both have
  std::vector<std::string> notes;  // unknown answers, property errors
  bool regressed() const { return !breaks.empty(); }
};

RulesetReview review_ruleset(spec::RulesetId ruleset, const Options& o);
Comparison compare(spec::RulesetId from, spec::RulesetId to, const Options& o);
std::string format_comparison(const Comparison& c);
std::string format_comparison_json(const Comparison& c);

}  // namespace permitcheck::review

#endif  // PERMITCHECK_REVIEW_REVIEW_H_
