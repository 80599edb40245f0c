// The four checks behind solver/prove.h, one file each, and what they share: limits, the
// comparison ruleset of counterexample traces, and judging a witness with the spec's Monitor.
#ifndef PERMITCHECK_SOLVER_INTERNAL_CHECKS_H_
#define PERMITCHECK_SOLVER_INTERNAL_CHECKS_H_

#include <string>
#include <vector>

#include "solver/internal/z3_util.h"
#include "solver/prove.h"
#include "spec/ruleset.h"

namespace permitcheck::solver::internal {

// What one check did: its outcome, the bound in words and the queries it made.
struct CheckRun {
  Outcome outcome;
  std::string bound;
  int queries = 0;
};

CheckRun run_conservation(const spec::Ruleset& rules, const Bounds& bounds);
CheckRun run_finalization(const spec::Ruleset& rules, const Bounds& bounds);
CheckRun run_isolation(const spec::Ruleset& rules, const Bounds& bounds);
CheckRun run_induction(const spec::Ruleset& rules, const Bounds& bounds);

std::vector<VacuityItem> vacuity_conservation(const spec::Ruleset& rules, const Bounds& bounds);
std::vector<VacuityItem> vacuity_finalization(const spec::Ruleset& rules, const Bounds& bounds);
std::vector<VacuityItem> vacuity_isolation(const spec::Ruleset& rules, const Bounds& bounds);
std::vector<VacuityItem> vacuity_induction(const spec::Ruleset& rules, const Bounds& bounds);

Limits limits_of(const Bounds& bounds);
PopcountEncoding popcount_of(const Bounds& bounds);

// The rules a counterexample is judged against: the final rules (rev-d). The properties are
// rev-d's invariants, whatever ruleset is being checked.
const spec::Ruleset& reference_rules();

// Runs w.events through a Monitor for w.header and fills w.rule and w.finding with the first
// violation. Returns false when the monitor reports none.
bool judge(Witness& w);

// The legacy catalogue's rule for row `id` ("L1" -> C7), judged against rev-d.
spec::RuleId catalogue_rule(std::string_view id);

// A vacuity item from an answer: `want_sat` says whether kSat means ok.
VacuityItem vacuity_item(std::string what, const Answer& a, bool want_sat);

}  // namespace permitcheck::solver::internal

#endif  // PERMITCHECK_SOLVER_INTERNAL_CHECKS_H_
