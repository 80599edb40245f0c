// The four checks behind solver/prove.h, one file each, and what they share: limits, the
// comparison ruleset of counterexample traces, and judging a witness with the spec's Monitor.
#ifndef PERMITCHECK_SOLVER_INTERNAL_CHECKS_H_
#define PERMITCHECK_SOLVER_INTERNAL_CHECKS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "solver/internal/z3_util.h"
#include "solver/prove.h"
#include "spec/client_command.h"
#include "spec/ruleset.h"

namespace permitcheck::solver::internal {

// What one check did: its outcome, the bound in words and the queries it made.
struct CheckRun {
  Outcome outcome;
  std::string bound;
  bool bounded = true;  // false: the statement holds for every parameter
  int queries = 0;
};

CheckRun run_conservation(const spec::Ruleset& rules, const Bounds& bounds);
CheckRun run_finalization(const spec::Ruleset& rules, const Bounds& bounds);
CheckRun run_isolation(const spec::Ruleset& rules, const Bounds& bounds);
CheckRun run_induction(const spec::Ruleset& rules, const Bounds& bounds);
// For every parameter (solver/NOTES.md, "Proofs for every parameter").
CheckRun run_conservation_all(const spec::Ruleset& rules, const Bounds& bounds);
CheckRun run_finalization_all(const spec::Ruleset& rules, const Bounds& bounds);
CheckRun run_induction_all(const spec::Ruleset& rules, const Bounds& bounds);
CheckRun run_isolation_all(const spec::Ruleset& rules, const Bounds& bounds);

std::vector<VacuityItem> vacuity_conservation(const spec::Ruleset& rules, const Bounds& bounds);
std::vector<VacuityItem> vacuity_finalization(const spec::Ruleset& rules, const Bounds& bounds);
std::vector<VacuityItem> vacuity_isolation(const spec::Ruleset& rules, const Bounds& bounds);
std::vector<VacuityItem> vacuity_induction(const spec::Ruleset& rules, const Bounds& bounds);
std::vector<VacuityItem> vacuity_conservation_all(const spec::Ruleset& rules, const Bounds& bounds);
std::vector<VacuityItem> vacuity_finalization_all(const spec::Ruleset& rules, const Bounds& bounds);
std::vector<VacuityItem> vacuity_induction_all(const spec::Ruleset& rules, const Bounds& bounds);
std::vector<VacuityItem> vacuity_isolation_all(const spec::Ruleset& rules, const Bounds& bounds);

// The bit-level encoding at B <= bounds.bmax refines the command summary (summary.h) for `rules`
// and the reference: kUnsat when it does.
Answer refinement_check(const spec::Ruleset& rules, const Bounds& bounds, int* queries);

Limits limits_of(const Bounds& bounds);
PopcountEncoding popcount_of(const Bounds& bounds);

// The rules a counterexample is judged against: the final rules (rev-d). The properties are
// rev-d's invariants, whatever ruleset is being checked. Written out literally in prove.cc, not
// read from spec::ruleset(kRevD), so the reference is independent of what is checked.
const spec::Ruleset& reference_rules();

// Runs w.events through a Monitor for w.header and fills w.rule and w.finding with the first
// violation. Returns false when the monitor reports none.
bool judge(Witness& w);

// The witness trace of a command that breaks conservation (conservation.cc): `s` handled by the
// spec under `rules` after a grant, judged against rev-d, `p` the reference P and `pe` whether
// the reference calls it a protocol error. `row` is its catalogue row or finding ("L1", "F3").
// nullopt, with *disagreement, when the spec returns other than `model_total`.
std::optional<Witness> command_witness(const spec::Ruleset& rules, const spec::CommandSituation& s,
                                       std::int64_t model_total, std::int64_t p, bool pe,
                                       const std::string& situation, const std::string& row,
                                       bool lost, std::string* disagreement);

// A class of command situations the conservation checks search one witness in, and the legacy
// catalogue row a witness of it shows when it loses (lost_row) or over-returns (over_row).
struct SituationClass {
  std::string name;
  z3::expr when;
  std::string lost_row;
  std::string over_row;
};

// The reference's view of a command that the classes are read from: the bit-level encoding
// (conservation.cc) and the summary (conservation_all.cc) fill it alike. `stage` is 2 bits
// (kStage*), `path` 3 bits (spec::PayloadPath), `fate0` index 0's 3-bit IndexFate code.
struct ClassInputs {
  z3::expr stage, path, fate0;
  z3::expr protocol_error, inconsistent, decompress, path_reached, single_run, batch_run,
      parse_failure;
};

// ClassInputs from the reference's outcome: a CommandOutcome or a SummaryOutcome, which name
// these stages alike.
template <typename Outcome>
ClassInputs class_inputs(const Outcome& ref, const z3::expr& stage, const z3::expr& path,
                         const z3::expr& fate0, const z3::expr& parse_failure) {
  return ClassInputs{stage, path, fate0, ref.protocol_error, ref.inconsistent, ref.decompress,
                     ref.path_reached, ref.single_run, ref.batch_run, parse_failure};
}

// The sixteen classes (protocol error, each failure stage, each payload path, each fate of a
// single message, a batch with and without a parse failure), in report order.
std::vector<SituationClass> situation_classes(z3::context& ctx, const ClassInputs& in);

// A vacuity item from an answer: `want_sat` says whether kSat means ok.
VacuityItem vacuity_item(std::string what, const Answer& a, bool want_sat);

}  // namespace permitcheck::solver::internal

#endif  // PERMITCHECK_SOLVER_INTERNAL_CHECKS_H_
