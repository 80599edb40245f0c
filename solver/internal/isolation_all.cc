// Isolation for any number of incarnations, consumers and steps (E3 N2-N6): an inductive
// invariant over incarnation tokens, checked by Z3 as initiation, consecution and implication
// (nothing unrolled).
//
// Tokens are integers, fresh at every replacement (CommandCloseConsumer keeps the connection,
// a reconnect takes a fresh one), so there may be any number of incarnations. One consumer is
// tracked; the others share nothing with it but the connection, and every ruleset's return
// scope and Flow re-check look only at the same consumer, so a token credited is never another
// consumer's. Units and queued Flow tasks do not interact, and each property is about one unit
// or one task, so the system follows one arbitrary unit in flight (each delivery may be the one
// tracked) and one arbitrary queued Flow task (each credit may queue it): a violation by any unit
// or task is a violation by the tracked one in some run.
//
// The invariant: every token in use is below the next fresh token; the tracked unit carries the
// token and connection of the incarnation that was debited, and while that token is current its
// incarnation is Flow-enabled on the current connection; a queued task whose token is current
// belongs to a Flow-enabled incarnation. Implication, over every step from an invariant state:
// only the debited token is credited (E3, N3), no Flow is written for a token that is not
// current (N5, N6) or not Flow-enabled (N4). When a ruleset breaks it, the counterexamples come
// from isolation.cc's bounded model checking, whose traces the Monitor re-checks.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "solver/internal/checks.h"

namespace permitcheck::solver::internal {
namespace {

enum class TokAction : unsigned { kSubscribeOk, kDeliver, kReturn, kRunTask, kClose, kReconnect };
inline constexpr unsigned kTokActions = 6;

struct TokState {
  z3::expr cur, next, cnx, next_cnx, enabled;
  z3::expr m_live, m_tok, m_cnx;  // the tracked unit
  z3::expr t_live, t_tok;         // the tracked queued Flow task
};

struct TokStep {
  z3::expr action;  // 3 bits
  z3::expr pick;    // deliver: this delivery is the tracked unit; return: the credit queues the task
};

struct TokBad {
  z3::expr cross;        // E3/N3: a token other than the debited one credited
  z3::expr old_flow;     // N5/N6: a Flow written for a token that is not current
  z3::expr not_enabled;  // N4: a Flow written for an incarnation not Flow-enabled
  z3::expr any() const { return cross || old_flow || not_enabled; }
};

class TokSystem {
 public:
  TokSystem(z3::context& ctx, const spec::Ruleset& rules) : ctx_(ctx), rules_(rules) {}

  TokState state(const std::string& n) {
    auto i = [&](const char* p) { return ctx_.int_const((n + "." + p).c_str()); };
    auto b = [&](const char* p) { return ctx_.bool_const((n + "." + p).c_str()); };
    return TokState{i("cur"), i("next"), i("cnx"), i("next_cnx"), b("enabled"),
                    b("m_live"), i("m_tok"), i("m_cnx"), b("t_live"), i("t_tok")};
  }
  TokStep step(const std::string& n) {
    return TokStep{ctx_.bv_const((n + ".action").c_str(), 3),
                   ctx_.bool_const((n + ".pick").c_str())};
  }
  z3::expr is(const TokStep& st, TokAction a) const {
    return st.action == ctx_.bv_val(static_cast<unsigned>(a), 3);
  }
  z3::expr init(const TokState& s) const {
    return s.cur == 0 && s.next == 1 && s.cnx == 0 && s.next_cnx == 1 && !s.enabled &&
           !s.m_live && !s.t_live;
  }
  z3::expr guard(const TokState& s, const TokStep& st) const {
    return z3::ule(st.action, ctx_.bv_val(kTokActions - 1, 3)) &&
           z3::implies(is(st, TokAction::kSubscribeOk), !s.enabled) &&
           z3::implies(is(st, TokAction::kDeliver), s.enabled) &&  // M1: after the grant
           z3::implies(is(st, TokAction::kReturn), s.m_live) &&
           z3::implies(is(st, TokAction::kRunTask), s.t_live);
  }
  // Whether the return of the tracked unit credits some state, and which token that state has.
  void credit(const TokState& s, z3::expr* credited, z3::expr* token) const {
    switch (rules_.return_scope) {
      case spec::ReturnScope::kIncarnation:  // N3: the retained state, only while current
        *credited = s.m_tok == s.cur;
        *token = s.m_tok;
        return;
      case spec::ReturnScope::kCurrentConsumer:  // legacy: whatever is current now
        *credited = ctx_.bool_val(true);
        *token = s.cur;
        return;
      case spec::ReturnScope::kSameConnection:  // revision A (F5)
        *credited = s.m_cnx == s.cnx;
        *token = s.cur;
        return;
    }
  }
  z3::expr written(const TokState& s) const {  // the tracked task's Flow is written
    return rules_.flow_recheck == spec::FlowRecheck::kIdentity ? s.t_tok == s.cur
                                                               : ctx_.bool_val(true);
  }
  TokBad bad(const TokState& s, const TokStep& st) const {
    z3::expr credited = ctx_.bool_val(false), token = s.cur;
    credit(s, &credited, &token);
    const z3::expr ret = is(st, TokAction::kReturn);
    const z3::expr run = is(st, TokAction::kRunTask) && written(s);
    return TokBad{ret && credited && token != s.m_tok, run && s.t_tok != s.cur,
                  run && s.t_tok == s.cur && !s.enabled};
  }
  TokState next(const TokState& s, const TokStep& st) const {
    z3::expr credited = ctx_.bool_val(false), token = s.cur;
    credit(s, &credited, &token);
    const z3::expr del = is(st, TokAction::kDeliver) && (st.pick || !s.m_live);
    const z3::expr ret = is(st, TokAction::kReturn);
    const z3::expr queue = ret && credited && st.pick;  // N5: the threshold swap queues a task
    const z3::expr close = is(st, TokAction::kClose);
    const z3::expr reconnect = is(st, TokAction::kReconnect);
    const z3::expr replace = close || reconnect;
    return TokState{
        z3::ite(replace, s.next, s.cur),
        z3::ite(replace, s.next + 1, s.next),
        z3::ite(reconnect, s.next_cnx, s.cnx),
        z3::ite(reconnect, s.next_cnx + 1, s.next_cnx),
        z3::ite(replace, ctx_.bool_val(false),
                z3::ite(is(st, TokAction::kSubscribeOk), ctx_.bool_val(true), s.enabled)),
        z3::ite(del, ctx_.bool_val(true), z3::ite(ret, ctx_.bool_val(false), s.m_live)),
        z3::ite(del, s.cur, s.m_tok),
        z3::ite(del, s.cnx, s.m_cnx),
        z3::ite(queue, ctx_.bool_val(true),
                z3::ite(is(st, TokAction::kRunTask), ctx_.bool_val(false), s.t_live)),
        z3::ite(queue, token, s.t_tok),
    };
  }
  z3::expr invariant(const TokState& s, bool task_enabled = true) const {
    return s.cur < s.next && s.cnx < s.next_cnx && s.cur >= 0 && s.cnx >= 0 &&
           z3::implies(s.m_live, s.m_tok >= 0 && s.m_tok < s.next && s.m_cnx < s.next_cnx &&
                                     z3::implies(s.m_tok == s.cur, s.m_cnx == s.cnx && s.enabled)) &&
           z3::implies(s.t_live, s.t_tok >= 0 && s.t_tok < s.next &&
                                     (task_enabled ? z3::implies(s.t_tok == s.cur, s.enabled)
                                                   : ctx_.bool_val(true)));
  }

 private:
  z3::context& ctx_;
  const spec::Ruleset& rules_;
};

}  // namespace

CheckRun run_isolation_all(const spec::Ruleset& rules, const Bounds& b) {
  CheckRun run;
  run.bounded = false;
  run.bound = "any incarnations, consumers, steps (token invariant)";
  z3::context ctx;
  Query q(ctx, limits_of(b), /*bit_vectors_only=*/false);
  TokSystem sys(ctx, rules);
  const TokState s0 = sys.state("i0");
  const TokState s = sys.state("s");
  const TokStep st = sys.step("st");
  const TokState n = sys.next(s, st);
  const z3::expr premise = sys.invariant(s) && sys.guard(s, st);
  const std::pair<const char*, Answer> parts[] = {
      {"initiation", q.check(sys.init(s0) && !sys.invariant(s0))},
      {"consecution", q.check(premise && !sys.invariant(n))},
      {"implication", q.check(premise && sys.bad(s, st).any())},
  };
  run.queries = q.queries();
  std::string failed;
  for (const auto& [name, a] : parts) {
    if (a.verdict == Verdict::kUnknown) {
      run.outcome = Unknown{absl::StrCat(name, ": ", a.reason)};
      return run;
    }
    if (a.verdict == Verdict::kSat && failed.empty()) failed = absl::StrCat(name, " fails");
  }
  if (failed.empty()) {
    run.outcome = Proved{
        "inductive invariant over incarnation tokens (initiation, consecution, implication, "
        "as integers): for runs of any length with any number of incarnations (replacements by "
        "CommandCloseConsumer or reconnect) and consumers, every unit in flight carries the "
        "token of the incarnation that was debited, only that token is credited and only "
        "while it is current (E3 N2 N3), and no Flow is written for a token that is not current "
        "(N5 N6) or not Flow-enabled (N4)"};
    return run;
  }
  CheckRun bounded = run_isolation(rules, b);
  run.queries += bounded.queries;
  if (auto* cex = std::get_if<Counterexample>(&bounded.outcome)) {
    cex->note = absl::StrCat(failed, "; witnesses from bounded model checking (", bounded.bound,
                             ")", cex->note.empty() ? "" : "; ", cex->note);
    run.outcome = std::move(*cex);
  } else {
    run.outcome = Unknown{absl::StrCat(failed, ", and bounded model checking (", bounded.bound,
                                       ") answers ", std::string(outcome_name(bounded.outcome)))};
  }
  return run;
}

std::vector<VacuityItem> vacuity_isolation_all(const spec::Ruleset& rules, const Bounds& b) {
  std::vector<VacuityItem> out;
  z3::context ctx;
  Query q(ctx, limits_of(b), /*bit_vectors_only=*/false);
  TokSystem sys(ctx, rules);
  const TokState s = sys.state("s");
  const TokStep st = sys.step("st");
  const z3::expr premise = sys.invariant(s) && sys.guard(s, st);
  out.push_back(vacuity_item("assumptions: an invariant state with a step", q.check(premise), true));
  out.push_back(vacuity_item("assumptions: a unit of a replaced incarnation returns",
                             q.check(premise && sys.is(st, TokAction::kReturn) && s.m_tok != s.cur),
                             true));
  out.push_back(vacuity_item(
      "assumptions: a queued Flow task of a replaced incarnation runs",
      q.check(premise && sys.is(st, TokAction::kRunTask) && s.t_tok != s.cur), true));
  out.push_back(vacuity_item(
      "assumptions: a replacement while a unit and a task are in flight",
      q.check(premise && sys.is(st, TokAction::kClose) && s.m_live && s.t_live), true));
  out.push_back(vacuity_item(
      "false variant refuted: the invariant without 'a current task's incarnation is "
      "Flow-enabled' gives N4",
      q.check(sys.invariant(s, /*task_enabled=*/false) && sys.guard(s, st) &&
              sys.bad(s, st).any()),
      true));
  const TokState n = sys.next(s, st);
  out.push_back(vacuity_item(
      "false variant refuted: a unit in flight stays on the current connection (reconnect)",
      q.check(premise && sys.is(st, TokAction::kReconnect) && s.m_live && n.m_cnx != n.cnx),
      true));
  return out;
}

}  // namespace permitcheck::solver::internal
