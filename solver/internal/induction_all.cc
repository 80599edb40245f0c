// Conservation at quiescence (E5 E6) for every B: the induction system of induction.cc with
// every receive abstracted by the command summary (summary.h), so a command may have any B and
// any P up to 2^31-1 and a dispatch any entry up to 2^31-1 units. Z3 checks the three parts of
// an inductive-invariant proof (initiation, consecution, implication: 1-induction) over
// integers; nothing is unrolled and nothing is bounded. That the summary is what the bit-level
// command does is conservation-all's refinement. When the invariant fails, the counterexamples
// come from induction.cc's bounded model checking of the bit-level system (B <= 8), whose
// traces the Monitor re-checks.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "solver/internal/checks.h"
#include "solver/internal/induction.h"

namespace permitcheck::solver::internal {

inline constexpr int kFallbackDepth = 4;

CheckRun run_induction_all(const spec::Ruleset& rules, const Bounds& b) {
  CheckRun run;
  run.bounded = false;
  run.bound = "any run, any Q, T, B, P <= 2^31-1 (summaries)";
  if (rules.return_scope == spec::ReturnScope::kSameConnection) {
    run.outcome = Unknown{"connection-scoped credit (revision A) is not modelled by the induction "
                          "system; isolation-all covers it (F5)"};
    return run;
  }
  struct Part {
    const char* name;
    Answer answer;
  };
  std::vector<Part> parts;
  {
    z3::context ctx;
    Query q(ctx, limits_of(b), /*bit_vectors_only=*/false);
    IndSystem sys(ctx, rules, static_cast<unsigned>(b.induction_bmax), /*summaries=*/true);
    q.add(sys.params());
    const IndState s0 = sys.fresh_state("all.0");
    parts.push_back({"initiation", q.check(sys.init(s0) && !sys.invariant(s0))});
    const IndState s = sys.fresh_state("all.s");
    const IndStep step = sys.fresh_step("all.step");
    z3::expr guard = ctx.bool_val(true);
    const IndState n = sys.next(s, step, &guard);
    parts.push_back({"consecution", q.check(sys.invariant(s) && guard && !sys.invariant(n))});
    parts.push_back({"implication", q.check(sys.invariant(s) && !sys.safety(s))});
    run.queries += q.queries();
  }
  std::string failed;
  for (const Part& p : parts) {
    if (p.answer.verdict == Verdict::kUnknown) {
      run.outcome = Unknown{absl::StrCat(p.name, ": ", p.answer.reason)};
      return run;
    }
    if (p.answer.verdict == Verdict::kSat && failed.empty()) failed = absl::StrCat(p.name, " fails");
  }
  if (failed.empty()) {
    run.outcome = Proved{
        "1-induction over integers with every command abstracted by its summary: initiation, "
        "consecution and implication hold, so for runs of every length (any number of commands "
        "with any B and P up to 2^31-1, entries of up to 2^31-1 units dispatched only while "
        "available > 0, returns, Flow tasks, Flows and replacements by CommandCloseConsumer or "
        "reconnect), every Q >= 1 and 1 <= T <= Q: available + in-flight commands + held "
        "messages + accumulator + queued Flow tasks + in-flight Flows = Q, and at quiescence "
        "available + accumulator = Q with available >= 1 (E5 E6)"};
    return run;
  }
  // A command that loses or invents units shows at depth 2 (dispatch, receive); a replacement's
  // at depth 4. Searching every class deeper takes minutes, so depth 2 first.
  Bounds shallow = b;
  CheckRun bounded;
  for (const int depth : {2, kFallbackDepth}) {
    shallow.depth = std::min(b.depth, depth);
    bounded = run_induction(rules, shallow);
    run.queries += bounded.queries;
    if (std::holds_alternative<Counterexample>(bounded.outcome)) break;
  }
  if (auto* cex = std::get_if<Counterexample>(&bounded.outcome)) {
    cex->note = absl::StrCat(failed, "; witnesses from bounded model checking (", bounded.bound,
                             ", depth ", shallow.depth, ")", cex->note.empty() ? "" : "; ", cex->note);
    run.outcome = std::move(*cex);
  } else {
    run.outcome = Unknown{absl::StrCat(failed, ", and bounded model checking (", bounded.bound,
                                       ", depth ", shallow.depth, ") answers ",
                                       std::string(outcome_name(bounded.outcome)),
                                       std::holds_alternative<Unknown>(bounded.outcome)
                                           ? ": " + std::get<Unknown>(bounded.outcome).reason
                                           : "")};
  }
  return run;
}

std::vector<VacuityItem> vacuity_induction_all(const spec::Ruleset& rules, const Bounds& b) {
  std::vector<VacuityItem> out;
  z3::context ctx;
  Query q(ctx, limits_of(b), /*bit_vectors_only=*/false);
  IndSystem sys(ctx, rules, static_cast<unsigned>(b.induction_bmax), /*summaries=*/true);
  q.add(sys.params());
  const IndState s = sys.fresh_state("v.s");
  const IndStep step = sys.fresh_step("v.step");
  z3::expr guard = ctx.bool_val(true);
  const IndState n = sys.next(s, step, &guard);
  const z3::expr premise = sys.invariant(s) && guard;
  out.push_back(vacuity_item("assumptions: consecution, an invariant state with a step",
                             q.check(premise), true));
  const SummaryVars& v = *step.sum;
  out.push_back(vacuity_item(
      "assumptions: consecution receiving a batch of B = 2^31-1",
      q.check(premise && sys.action_is(step, IndAction::kReceive) && v.batched &&
              v.batch_size == ctx.int_val(spec::kMaxPermits)),
      true));
  out.push_back(vacuity_item(
      "assumptions: consecution receiving a batch with a parse failure",
      q.check(premise && sys.action_is(step, IndAction::kReceive) && v.batched && v.parse_failure),
      true));
  out.push_back(vacuity_item(
      "assumptions: consecution dispatching 2^31-1 units",
      q.check(premise && sys.action_is(step, IndAction::kDispatch) &&
              step.n == ctx.int_val(spec::kMaxPermits)),
      true));
  out.push_back(vacuity_item("assumptions: implication, an invariant quiescent state",
                             q.check(sys.invariant(s) && sys.quiescent(s)), true));
  out.push_back(vacuity_item(
      "false variant refuted: the invariant without 0 <= accumulator < T implies E6",
      q.check(sys.invariant_without_threshold(s) && !sys.safety(s)), true));
  (void)n;
  return out;
}

}  // namespace permitcheck::solver::internal
