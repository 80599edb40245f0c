// Check 4, the conservation invariant behind E5 by k-induction, in the three checks of an
// inductive-invariant proof (as Apalache checks one): initiation (every initial state, and every
// state reached in fewer than k steps, satisfies the invariant), consecution (k consecutive
// states satisfying it are always followed by one that does), and implication (the invariant
// implies the safety property E5/E6 at quiescence). Together they prove the property for runs
// of every length. When consecution fails, bounded model checking from the initial state looks
// for a real counterexample (a ruleset that breaks conservation), shortest first.
#include "solver/internal/induction.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "solver/internal/checks.h"
#include "solver/internal/z3_util.h"
#include "spec/finalize.h"
#include "spec/permit_state.h"

namespace permitcheck::solver::internal {
namespace {

constexpr unsigned kIndActionBits = 4;

spec::Id ind_inc(std::uint64_t n) { return spec::Id::number(n); }
spec::Id ind_cnx(int n) { return spec::Id::text(absl::StrCat("c", n)); }

}  // namespace

IndSystem::IndSystem(z3::context& ctx, const spec::Ruleset& rules, unsigned bmax, bool summaries)
    : ctx_(ctx),
      rules_(rules),
      bmax_(bmax),
      summaries_(summaries),
      q_(ctx.int_const("ind.Q")),
      t_(ctx.int_const("ind.T")) {}

IndState IndSystem::fresh_state(const std::string& name) {
  auto v = [&](const char* part) { return ctx_.int_const((name + "." + part).c_str()); };
  return IndState{v("avail"), v("wire"), v("held"), v("acc"), v("tasks"), v("wflow"),
                  v("old_held"), v("old_tasks")};
}

IndStep IndSystem::fresh_step(const std::string& name) {
  CommandVars cmd = make_command_vars(ctx_, bmax_, name + ".cmd");
  CommandOutcome out = encode_command(rules_, cmd);
  IndStep step{ctx_.bv_const((name + ".action").c_str(), kIndActionBits),
               ctx_.int_const((name + ".n").c_str()), std::move(cmd), std::move(out),
               std::nullopt, std::nullopt};
  if (summaries_) {
    step.sum = make_summary_vars(ctx_, name + ".sum");
    step.sum_out = encode_summary(rules_, *step.sum);
  }
  return step;
}

z3::expr IndSystem::action_is(const IndStep& step, IndAction a) const {
  return step.action == ctx_.bv_val(static_cast<unsigned>(a), kIndActionBits);
}

void IndSystem::credit(z3::expr& acc, z3::expr& tasks, const z3::expr& n) const {
  // N5: the accumulator reaches T, is swapped to 0 and a Flow task of its value is queued.
  const z3::expr a1 = acc + n;
  const z3::expr swap = n > 0 && a1 >= t_;
  tasks = z3::ite(swap, tasks + a1, tasks);
  acc = z3::ite(swap, ctx_.int_val(0), a1);
}

IndState IndSystem::next(const IndState& s, const IndStep& step, z3::expr* guard) {
  const z3::expr& n = step.n;
  auto is = [&](IndAction a) { return action_is(step, a); };
  auto num = [](const z3::expr& bv) { return z3::bv2int(bv, false); };

  // The command of a receive: honest wire (the field carries the broker's P, which the broker
  // debited at dispatch), outside the known deviations X2/X3 and protocol errors.
  z3::expr p = ctx_.int_val(0);
  z3::expr command_ok = ctx_.bool_val(false);
  z3::expr claimed = p, direct = p, settle = p;
  if (summaries_) {
    const SummaryVars& v = *step.sum;
    const SummaryOutcome ref = encode_summary(reference_rules(), v);
    p = z3::ite(v.batch_size == 0, ctx_.int_val(0), v.delivered + v.skipped + v.rest);
    auto path_is = [&](spec::PayloadPath x) {
      return v.path == ctx_.bv_val(static_cast<unsigned>(x), 3);
    };
    const z3::expr x2 =
        ref.path_reached && path_is(spec::PayloadPath::kCryptoDiscard) && p != v.batch_size;
    const z3::expr x3 = ref.path_reached && path_is(spec::PayloadPath::kCryptoFail);
    command_ok = summary_domain(v) && v.field_present && v.field == p && p >= 1 &&
                 p <= s.wire && !x2 && !x3 && !ref.protocol_error &&
                 !step.sum_out->protocol_error;
    claimed = step.sum_out->claimed;
    direct = step.sum_out->direct;
    settle = step.sum_out->settle;
  } else {
    const CommandVars& v = step.cmd;
    const CommandOutcome ref = encode_command(reference_rules(), v);
    const z3::expr p40 = candidate(v);
    p = num(p40);
    auto path_is = [&](spec::PayloadPath x) {
      return v.path == ctx_.bv_val(static_cast<unsigned>(x), 3);
    };
    const z3::expr x2 = ref.path_reached && path_is(spec::PayloadPath::kCryptoDiscard) &&
                        p40 != resize(v.batch_size, kCountBits);
    const z3::expr x3 = ref.path_reached && path_is(spec::PayloadPath::kCryptoFail);
    command_ok = command_domain(v) && v.field_present && v.field == resize(p40, 64) && p >= 1 &&
                 p <= s.wire && !x2 && !x3 && !ref.protocol_error && !step.out.protocol_error;
    claimed = num(step.out.claimed);
    direct = num(step.out.direct);
    settle = num(step.out.settle);
  }
  // A dispatch sends one entry: at most bmax units, or 2^31-1 with summaries (B9). It starts
  // only while available is positive (B12).
  const z3::expr entry_max =
      summaries_ ? ctx_.int_val(spec::kMaxPermits) : ctx_.int_val(bmax_);

  *guard = z3::ule(step.action, ctx_.bv_val(kIndActions - 1, kIndActionBits)) &&
           z3::implies(is(IndAction::kDispatch),
                       s.avail > 0 && n >= 1 && n <= entry_max) &&
           z3::implies(is(IndAction::kReceive), command_ok) &&
           z3::implies(is(IndAction::kReturn), s.held >= 1) &&
           z3::implies(is(IndAction::kFlowTask), n >= 1 && n <= s.tasks) &&
           z3::implies(is(IndAction::kBrokerFlow), n >= 1 && n <= s.wflow) &&
           z3::implies(is(IndAction::kOldReturn), s.old_held >= 1) &&
           z3::implies(is(IndAction::kOldFlowTask), n >= 1 && n <= s.old_tasks);

  // Receive: what the command's handling returns now (direct, then terminal) and holds.
  z3::expr acc_r = s.acc;
  z3::expr tasks_r = s.tasks;
  credit(acc_r, tasks_r, direct);
  credit(acc_r, tasks_r, settle);
  // A return of one unit, to the current incarnation.
  z3::expr acc_1 = s.acc;
  z3::expr tasks_1 = s.tasks;
  credit(acc_1, tasks_1, ctx_.int_val(1));
  const bool legacy_scope = rules_.return_scope == spec::ReturnScope::kCurrentConsumer;
  const bool legacy_flow = rules_.flow_recheck == spec::FlowRecheck::kNone;
  const z3::expr replace = is(IndAction::kReplaceClose) || is(IndAction::kReplaceReconnect);
  const z3::expr zero = ctx_.int_val(0);

  IndState out = s;
  out.avail = z3::ite(is(IndAction::kDispatch), s.avail - n,
              z3::ite(is(IndAction::kBrokerFlow), s.avail + n, z3::ite(replace, q_, s.avail)));
  out.wire = z3::ite(is(IndAction::kDispatch), s.wire + n,
             z3::ite(is(IndAction::kReceive), s.wire - p, z3::ite(replace, zero, s.wire)));
  out.held = z3::ite(is(IndAction::kReceive), s.held + claimed,
             z3::ite(is(IndAction::kReturn), s.held - 1, z3::ite(replace, zero, s.held)));
  const z3::expr old_credit = legacy_scope ? is(IndAction::kOldReturn) : ctx_.bool_val(false);
  out.acc = z3::ite(is(IndAction::kReceive), acc_r,
            z3::ite(is(IndAction::kReturn) || old_credit, acc_1, z3::ite(replace, zero, s.acc)));
  out.tasks = z3::ite(is(IndAction::kReceive), tasks_r,
              z3::ite(is(IndAction::kReturn) || old_credit, tasks_1,
              z3::ite(is(IndAction::kFlowTask), s.tasks - n, z3::ite(replace, zero, s.tasks))));
  const z3::expr old_flow = legacy_flow ? is(IndAction::kOldFlowTask) : ctx_.bool_val(false);
  out.wflow = z3::ite(is(IndAction::kFlowTask) || old_flow, s.wflow + n,
              z3::ite(is(IndAction::kBrokerFlow), s.wflow - n, z3::ite(replace, zero, s.wflow)));
  out.old_held = z3::ite(replace, s.old_held + s.held,
                 z3::ite(is(IndAction::kOldReturn), s.old_held - 1, s.old_held));
  out.old_tasks = z3::ite(is(IndAction::kReplaceClose), s.old_tasks + s.tasks,
                  z3::ite(is(IndAction::kReplaceReconnect), zero,  // the connection is gone
                  z3::ite(is(IndAction::kOldFlowTask), s.old_tasks - n, s.old_tasks)));
  return out;
}

z3::expr IndSystem::params() const { return q_ >= 1 && t_ >= 1 && t_ <= q_; }

z3::expr IndSystem::init(const IndState& s) const {
  return s.avail == q_ && s.wire == 0 && s.held == 0 && s.acc == 0 && s.tasks == 0 &&
         s.wflow == 0 && s.old_held == 0 && s.old_tasks == 0;
}

z3::expr IndSystem::conservation(const IndState& s) const {
  return s.avail + s.wire + s.held + s.acc + s.tasks + s.wflow == q_;
}

z3::expr IndSystem::invariant_without_threshold(const IndState& s) const {
  return s.acc >= 0 && s.wire >= 0 && s.held >= 0 && s.tasks >= 0 && s.wflow >= 0 &&
         s.old_held >= 0 && s.old_tasks >= 0 &&
         s.avail >= (summaries_ ? ctx_.int_val(1 - spec::kMaxPermits)
                                : ctx_.int_val(1 - static_cast<int>(bmax_))) &&
         conservation(s);
}

z3::expr IndSystem::invariant(const IndState& s) const {
  return invariant_without_threshold(s) && s.acc < t_;
}

z3::expr IndSystem::quiescent(const IndState& s) const {
  return s.wire == 0 && s.held == 0 && s.tasks == 0 && s.wflow == 0;
}

z3::expr IndSystem::safety(const IndState& s) const {
  return z3::implies(quiescent(s), s.avail + s.acc == q_ && s.avail >= 1);
}

IndPath unroll_from_init(IndSystem& sys, int depth) {
  IndPath path{{sys.fresh_state("ind.0")}, {}, sys.params()};
  path.constraints = path.constraints && sys.init(path.states[0]);
  for (int t = 1; t <= depth; ++t) {
    IndStep step = sys.fresh_step(absl::StrCat("ind.", t));
    z3::expr guard = path.constraints;
    IndState next = sys.next(path.states.back(), step, &guard);
    path.constraints = path.constraints && guard;
    path.steps.push_back(std::move(step));
    path.states.push_back(std::move(next));
  }
  return path;
}

std::string ind_step_name(const IndConcreteStep& s) {
  switch (s.action) {
    case IndAction::kDispatch:
      return absl::StrCat("dispatch ", s.n);
    case IndAction::kReceive:
      return absl::StrCat("receive [", describe_situation(s.command), "]");
    case IndAction::kReturn:
      return "return";
    case IndAction::kFlowTask:
      return absl::StrCat("flow_task ", s.n);
    case IndAction::kBrokerFlow:
      return absl::StrCat("broker_flow ", s.n);
    case IndAction::kReplaceClose:
      return "close_consumer";
    case IndAction::kReplaceReconnect:
      return "reconnect";
    case IndAction::kOldReturn:
      return "old_return";
    case IndAction::kOldFlowTask:
      return absl::StrCat("old_flow_task ", s.n);
  }
  return "?";
}

IndRun run_ind(const spec::Ruleset& rules, std::int64_t q, std::int64_t t,
               const std::vector<IndConcreteStep>& steps, bool drain) {
  IndRun run;
  std::uint64_t inc = 1;
  int cnx = 1;
  std::uint64_t next_cmd = 1;
  spec::PermitState state(q, t);
  std::deque<spec::Id> held;
  std::deque<std::int64_t> tasks;
  std::deque<spec::Id> old_held;
  struct OldTask {
    std::uint64_t inc;
    int cnx;
    std::int64_t n;
  };
  std::deque<OldTask> old_tasks;
  std::int64_t wire = 0;
  auto emit = [&](spec::Event e) { run.events.push_back(std::move(e)); };
  auto credit = [&](std::int64_t n) {
    if (n <= 0) return;
    const absl::StatusOr<std::optional<std::int64_t>> flow = state.credit(n);
    if (flow.ok() && flow->has_value()) tasks.push_back(**flow);
  };
  auto subscribed = [&]() {
    emit(spec::IncOpen{.inc = ind_inc(inc), .cnx = ind_cnx(cnx), .consumer = 0});
    emit(spec::IncFlowEnabled{.inc = ind_inc(inc)});
    state = spec::PermitState(q, t);
    const std::int64_t grant = *state.enable_flow();
    emit(spec::Flow{.cnx = ind_cnx(cnx), .consumer = 0, .permits = grant, .inc = ind_inc(inc)});
  };
  auto write_tasks = [&](std::int64_t at_least) {
    std::int64_t written = 0;
    while (!tasks.empty() && written < at_least) {
      const std::int64_t n = tasks.front();
      tasks.pop_front();
      emit(spec::Flow{.cnx = ind_cnx(cnx), .consumer = 0, .permits = n, .inc = ind_inc(inc)});
      written += n;
    }
  };
  subscribed();
  for (const IndConcreteStep& step : steps) {
    switch (step.action) {
      case IndAction::kDispatch:
        wire += step.n;
        break;
      case IndAction::kReceive: {
        spec::CommandSituation s = step.command;
        s.inc = ind_inc(inc);
        s.cmd = spec::Id::number(next_cmd++);
        s.cnx = ind_cnx(cnx);
        const spec::CommandRun cmd = spec::handle_command(rules, s);
        for (const spec::Event& e : cmd.events) {
          emit(e);
          if (const auto* d = std::get_if<spec::DirectReturn>(&e)) credit(d->n);
          if (const auto* st = std::get_if<spec::Settle>(&e)) credit(st->n);
        }
        for (const spec::Id& m : cmd.handed_off) held.push_back(m);
        wire -= s.message_permits ? static_cast<std::int64_t>(*s.message_permits) : 0;
        if (wire < 0) run.valid = false;
        break;
      }
      case IndAction::kReturn:
        if (held.empty()) {
          run.valid = false;
          break;
        }
        emit(spec::MsgReturn{.msg = held.front(), .n = 1});
        held.pop_front();
        credit(1);
        break;
      case IndAction::kFlowTask:
        write_tasks(step.n);
        break;
      case IndAction::kBrokerFlow:
        break;
      case IndAction::kReplaceClose:
      case IndAction::kReplaceReconnect: {
        const bool close = step.action == IndAction::kReplaceClose;
        if (close) {
          emit(spec::CloseConsumer{.cnx = ind_cnx(cnx), .consumer = 0});
          emit(spec::IncClose{.inc = ind_inc(inc), .reason = spec::CloseReason::kCloseConsumer});
          for (const std::int64_t n : tasks) old_tasks.push_back({inc, cnx, n});
        } else {
          emit(spec::Disconnect{.cnx = ind_cnx(cnx)});
          emit(spec::IncClose{.inc = ind_inc(inc), .reason = spec::CloseReason::kDisconnect});
          old_tasks.clear();  // every task on the lost connection dies with it
          ++cnx;
          emit(spec::Connect{.cnx = ind_cnx(cnx)});
        }
        state.end();
        for (const spec::Id& m : held) old_held.push_back(m);
        held.clear();
        tasks.clear();
        wire = 0;
        ++inc;
        subscribed();  // N2: a new permit state; nothing is copied across
        break;
      }
      case IndAction::kOldReturn: {
        if (old_held.empty()) {
          run.valid = false;
          break;
        }
        const spec::Id m = old_held.front();
        old_held.pop_front();
        if (rules.return_scope == spec::ReturnScope::kIncarnation) {
          emit(spec::Drop{.msg = m, .n = 1});  // N3
        } else {
          emit(spec::MsgReturn{.msg = m, .n = 1});
          credit(1);  // legacy: the consumer's current incarnation
        }
        break;
      }
      case IndAction::kOldFlowTask: {
        std::int64_t written = 0;
        while (!old_tasks.empty() && written < step.n) {
          const OldTask task = old_tasks.front();
          old_tasks.pop_front();
          if (rules.flow_recheck == spec::FlowRecheck::kIdentity) {
            emit(spec::Drop{.n = task.n});  // N5/N6
          } else {
            emit(spec::Flow{.cnx = ind_cnx(task.cnx), .consumer = 0, .permits = task.n,
                            .inc = ind_inc(task.inc)});
          }
          written += task.n;
        }
        break;
      }
    }
  }
  run.acc = state.accumulator();
  run.held = static_cast<std::int64_t>(held.size());
  for (const std::int64_t n : tasks) run.tasks += n;
  if (drain) {
    // Quiescence: every held message returns, every Flow task runs.
    while (!held.empty() || !tasks.empty()) {
      while (!held.empty()) {
        emit(spec::MsgReturn{.msg = held.front(), .n = 1});
        held.pop_front();
        credit(1);
      }
      write_tasks(INT64_MAX);
    }
    emit(spec::Quiescent{.cnx = ind_cnx(cnx), .consumer = 0});
  }
  return run;
}

namespace {

// The first `depth` steps of a path, unrolled from an initial state.
struct Path {
  std::vector<IndState> states;
  std::vector<IndStep> steps;
};

void extend(IndSystem& sys, Path& path, Query& q) {
  const int t = static_cast<int>(path.steps.size()) + 1;
  IndStep step = sys.fresh_step(absl::StrCat("ind.", t));
  z3::expr guard = q.ctx().bool_val(true);
  IndState next = sys.next(path.states.back(), step, &guard);
  q.add(guard);
  path.steps.push_back(std::move(step));
  path.states.push_back(std::move(next));
}

std::vector<IndConcreteStep> concrete_steps(const z3::model& m, const Path& path, int depth) {
  std::vector<IndConcreteStep> out;
  for (int t = 0; t < depth; ++t) {
    const IndStep& s = path.steps[static_cast<std::size_t>(t)];
    IndConcreteStep c{.action = static_cast<IndAction>(value(m, s.action)),
                      .n = signed_value(m, s.n)};
    if (c.action == IndAction::kReceive) c.command = situation_from(m, s.cmd);
    out.push_back(std::move(c));
  }
  return out;
}

// The legacy catalogue row a lost or over-granted command of `s` is (as check 1 classes it).
std::string command_row(const spec::CommandSituation& s, bool lost) {
  if (s.early_failure == spec::FailureStage::kChecksum) return "L1";
  if (s.early_failure == spec::FailureStage::kMetadata) return "L2";
  if (s.early_failure == spec::FailureStage::kDecompress) return "L3";
  for (const spec::IndexFate f : s.fates) {
    if (f == spec::IndexFate::kParseFails && s.batched) return lost ? "L4" : "L5";
  }
  if (!s.batched && !s.fates.empty() && s.fates.front() == spec::IndexFate::kBeforeStart) return "L9";
  return "";
}

struct IndClass {
  std::string name;
  IndAction action;
  bool lost;  // the sum drops below Q (else it rises above)
};

const std::vector<IndClass>& ind_classes() {
  static const std::vector<IndClass> kClasses = {
      {"a command's handling loses units", IndAction::kReceive, true},
      {"a command's handling invents units", IndAction::kReceive, false},
      {"a replaced incarnation's return is credited", IndAction::kOldReturn, false},
      {"a replaced incarnation's Flow task is written", IndAction::kOldFlowTask, false},
  };
  return kClasses;
}

// (1) Initiation: the initial state and every state reached in fewer than k steps satisfy the
// invariant. kUnsat: it holds; kSat: a state within k steps breaks it.
Answer check_initiation(const spec::Ruleset& rules, const Bounds& b, int k, unsigned bmax,
                        int& queries) {
  z3::context ctx;
  Query q(ctx, limits_of(b), /*bit_vectors_only=*/false);
  IndSystem sys(ctx, rules, bmax);
  Path path{{sys.fresh_state("ind.0")}, {}};
  q.add(sys.params());
  q.add(sys.init(path.states[0]));
  Answer result{Verdict::kUnsat, ""};
  for (int t = 0; t < k; ++t) {
    if (t > 0) extend(sys, path, q);
    const Answer a = q.check(!sys.invariant(path.states.back()));
    if (a.verdict != Verdict::kUnsat) {
      result = a;
      break;
    }
  }
  queries += q.queries();
  return result;
}

// (2) Consecution: k states satisfying the invariant, then one that does not (kUnsat: none).
Answer check_consecution(const spec::Ruleset& rules, const Bounds& b, int k, unsigned bmax,
                         int& queries) {
  z3::context ctx;
  Query q(ctx, limits_of(b), /*bit_vectors_only=*/false);
  IndSystem sys(ctx, rules, bmax);
  Path path{{sys.fresh_state("ind.s0")}, {}};
  q.add(sys.params());
  for (int t = 0; t < k; ++t) {
    q.add(sys.invariant(path.states.back()));
    extend(sys, path, q);
  }
  const Answer a = q.check(!sys.invariant(path.states.back()));
  queries += q.queries();
  return a;
}

// (3) Implication: the invariant gives E5 and E6 at quiescence (kUnsat: it does).
Answer check_implication(const spec::Ruleset& rules, const Bounds& b, unsigned bmax,
                         int& queries) {
  z3::context ctx;
  Query q(ctx, limits_of(b), /*bit_vectors_only=*/false);
  IndSystem sys(ctx, rules, bmax);
  const IndState s = sys.fresh_state("ind.s");
  q.add(sys.params());
  q.add(sys.invariant(s));
  const Answer a = q.check(!sys.safety(s));
  queries += q.queries();
  return a;
}

// The witness of `cls` in q's current model: the path's last step is of that class and the
// invariant's sum (`sum`) is off by the class's direction. Minimized when b.minimize, replayed
// through the reference model; its id is the rulebook row the step class shows.
Witness class_witness(Query& q, const IndSystem& sys, const Path& path, int depth,
                      const IndClass& cls, const z3::expr& sum, const spec::Ruleset& rules,
                      const Bounds& b) {
  std::vector<z3::expr> objectives = {sys.q(), sys.t()};
  for (const IndStep& st : path.steps) {
    objectives.push_back(st.n);
    objectives.push_back(st.cmd.batch_size);
  }
  // A replacement on the same connection (L7) before a reconnect (L6).
  for (const IndStep& st : path.steps) {
    objectives.push_back(bit(sys.action_is(st, IndAction::kReplaceReconnect)));
  }
  for (const IndStep& st : path.steps) {
    const z3::expr b_mask = low_mask(resize(st.cmd.batch_size, st.cmd.width));
    objectives.push_back(bit(st.cmd.ack_present));
    objectives.push_back(popcount(st.cmd.ack, 8));
    objectives.push_back(popcount((st.cmd.fate0 | st.cmd.fate1 | st.cmd.fate2) & b_mask, 8));
    objectives.push_back(st.cmd.stage);
    objectives.push_back(st.cmd.path);
    objectives.push_back(st.cmd.ack);
  }
  Minimized m{q.model(), true};
  if (b.minimize) m = minimize(q, objectives);
  const std::int64_t qv = static_cast<std::int64_t>(value(m.model, sys.q()));
  const std::int64_t tv = static_cast<std::int64_t>(value(m.model, sys.t()));
  const std::vector<IndConcreteStep> steps = concrete_steps(m.model, path, depth);
  const IndRun r = run_ind(rules, qv, tv, steps, /*drain=*/true);
  Witness w{.situation = cls.name};
  if (cls.action == IndAction::kReceive) {
    w.id = command_row(steps.back().command, cls.lost);
  } else if (cls.action == IndAction::kOldFlowTask) {
    w.id = "L11";
  } else {
    w.id = "L7";
    for (const IndConcreteStep& st : steps) {
      if (st.action == IndAction::kReplaceReconnect) w.id = "L6";
      if (st.action == IndAction::kReplaceClose) w.id = "L7";
    }
  }
  w.header = spec::TraceHeader{.source = spec::TraceSource::kClient,
                               .ruleset = spec::RulesetId::kRevD, .q = qv, .t = tv};
  w.events = r.events;
  std::vector<std::string> names;
  for (const IndConcreteStep& st : steps) names.push_back(ind_step_name(st));
  const std::int64_t sum_v = signed_value(m.model, sum);
  w.words = absl::StrCat("Q=", qv, ", T=", tv, ", ", depth, " steps: ", absl::StrJoin(names, ", "),
                         "; then available + in flight + held + accumulator = ", sum_v, " != Q (",
                         sum_v < qv ? absl::StrCat(qv - sum_v, " lost")
                                    : absl::StrCat(sum_v - qv, " invented"),
                         ")");
  w.minimal = m.complete;
  return w;
}

// Initiation or consecution failed: a reachable violation of the invariant, shortest first,
// one witness per class of step (ind_classes), each confirmed by the monitor (`judge`).
Outcome search_violation(const spec::Ruleset& rules, const Bounds& b, int k, unsigned bmax,
                         int& queries) {
  z3::context ctx;
  Query q(ctx, limits_of(b), /*bit_vectors_only=*/false);
  IndSystem sys(ctx, rules, bmax);
  Path path{{sys.fresh_state("ind.0")}, {}};
  q.add(sys.params());
  q.add(sys.init(path.states[0]));
  Counterexample cex;
  std::vector<bool> found(ind_classes().size(), false);
  bool any = false;
  const auto done = [&](Outcome o) {
    queries += q.queries();
    return o;
  };
  for (int d = 1; d <= b.depth; ++d) {
    extend(sys, path, q);
    const IndState& s = path.states.back();
    const IndStep& step = path.steps.back();
    const Answer a = q.check(!sys.invariant(s));
    if (a.verdict == Verdict::kUnknown) return done(Unknown{absl::StrCat("depth ", d, ": ", a.reason)});
    if (a.verdict == Verdict::kUnsat) continue;
    any = true;
    for (std::size_t c = 0; c < ind_classes().size(); ++c) {
      if (found[c]) continue;
      const IndClass& cls = ind_classes()[c];
      const z3::expr sum = s.avail + s.wire + s.held + s.acc + s.tasks + s.wflow;
      q.push();
      q.add(sys.action_is(step, cls.action) && (cls.lost ? sum < sys.q() : sum > sys.q()));
      if (q.check().verdict == Verdict::kSat) {
        found[c] = true;
        Witness w = class_witness(q, sys, path, d, cls, sum, rules, b);
        if (!judge(w)) {  // never report a counterexample the oracle does not confirm
          return done(Unknown{absl::StrCat("the monitor finds no violation in the witness: ", w.words)});
        }
        cex.witnesses.push_back(std::move(w));
      }
      q.pop();
    }
    if (std::find(found.begin(), found.end(), false) == found.end()) break;  // every class seen
  }
  if (!cex.witnesses.empty()) return done(std::move(cex));
  if (any) return done(Unknown{"the invariant fails but no class of step reproduces it"});
  return done(Unknown{absl::StrCat("not ", k, "-inductive, and no counterexample up to depth ",
                                   b.depth)});
}

}  // namespace

CheckRun run_induction(const spec::Ruleset& rules, const Bounds& b) {
  CheckRun run;
  const int k = std::max(1, b.induction_k);
  const unsigned bmax = static_cast<unsigned>(b.induction_bmax);
  run.bound = absl::StrCat("k=", k, ", B<=", bmax, ", any Q");
  if (rules.return_scope == spec::ReturnScope::kSameConnection) {
    // The system does not record which connection an old message came through.
    run.outcome = Unknown{"connection-scoped credit (revision A) is not modelled by the induction "
                          "system; the isolation check covers it (F5)"};
    return run;
  }
  int queries = 0;
  auto finish = [&](Outcome o) {
    run.outcome = std::move(o);
    run.queries = queries;
    return run;
  };
  const Answer initiation = check_initiation(rules, b, k, bmax, queries);
  if (initiation.verdict == Verdict::kUnknown) {
    return finish(Unknown{absl::StrCat("initiation: ", initiation.reason)});
  }
  if (initiation.verdict == Verdict::kUnsat) {  // kSat: a real violation, found by the search
    const Answer consecution = check_consecution(rules, b, k, bmax, queries);
    if (consecution.verdict == Verdict::kUnknown) {
      return finish(Unknown{absl::StrCat("consecution: ", consecution.reason)});
    }
    if (consecution.verdict == Verdict::kUnsat) {
      const Answer a = check_implication(rules, b, bmax, queries);
      if (a.verdict == Verdict::kUnknown) return finish(Unknown{absl::StrCat("implication: ", a.reason)});
      if (a.verdict == Verdict::kSat) return finish(Unknown{"implication fails: the invariant does not give E5/E6"});
      return finish(Proved{absl::StrCat(
          k, "-induction: initiation, consecution and implication hold, so for runs of every "
          "length (any number of commands with B <= ", bmax, ", returns, Flow tasks, Flows and "
          "replacements by CommandCloseConsumer or reconnect), every Q >= 1 and "
          "1 <= T <= Q: available + in-flight commands + held messages + accumulator + queued Flow "
          "tasks + in-flight Flows = Q, and at quiescence available + accumulator = Q with "
          "available >= 1 (E5 E6)")});
    }
  }
  return finish(search_violation(rules, b, k, bmax, queries));
}

std::vector<VacuityItem> vacuity_induction(const spec::Ruleset& rules, const Bounds& b) {
  std::vector<VacuityItem> out;
  const unsigned bmax = static_cast<unsigned>(b.induction_bmax);
  z3::context ctx;
  Query q(ctx, limits_of(b), /*bit_vectors_only=*/false);
  IndSystem sys(ctx, rules, bmax);
  q.add(sys.params());
  // The premises of the three checks are satisfiable.
  {
    const IndState s0 = sys.fresh_state("v.init");
    out.push_back(vacuity_item("assumptions: initiation, an initial state exists",
                               q.check(sys.init(s0)), true));
  }
  {
    const IndState s = sys.fresh_state("v.s");
    IndStep step = sys.fresh_step("v.step");
    z3::expr guard = ctx.bool_val(true);
    const IndState n = sys.next(s, step, &guard);
    const z3::expr premise = sys.invariant(s) && guard;
    out.push_back(vacuity_item("assumptions: consecution, an invariant state with a step",
                               q.check(premise), true));
    for (const auto& [name, action] : std::vector<std::pair<std::string, IndAction>>{
             {"a batch command is received", IndAction::kReceive},
             {"CommandCloseConsumer replaces the incarnation", IndAction::kReplaceClose},
             {"a reconnect replaces the incarnation", IndAction::kReplaceReconnect},
             {"an old unit returns", IndAction::kOldReturn},
             {"an old Flow task runs", IndAction::kOldFlowTask}}) {
      z3::expr extra = sys.action_is(step, action);
      if (action == IndAction::kReceive) extra = extra && step.cmd.batched;
      out.push_back(vacuity_item(absl::StrCat("assumptions: consecution with a step where ", name),
                                 q.check(premise && extra), true));
    }
    (void)n;
  }
  {
    const IndState s = sys.fresh_state("v.q");
    out.push_back(vacuity_item("assumptions: implication, an invariant quiescent state",
                               q.check(sys.invariant(s) && sys.quiescent(s)), true));
    // Deliberately false variants, refuted.
    out.push_back(vacuity_item(
        "false variant refuted: E5 at quiescence available == Q (the accumulator may hold units)",
        q.check(sys.invariant(s) && sys.quiescent(s) && s.avail != sys.q()), true));
    out.push_back(vacuity_item(
        "false variant refuted: the invariant without 0 <= accumulator < T implies E6",
        q.check(sys.invariant_without_threshold(s) && !sys.safety(s)), true));
    const IndState i = sys.fresh_state("v.i");
    out.push_back(vacuity_item(
        "false variant refuted: initiation of available + ... = Q + 1",
        q.check(sys.init(i) && !(i.avail + i.wire + i.held + i.acc + i.tasks + i.wflow ==
                                 sys.q() + 1)),
        true));
  }
  return out;
}

}  // namespace permitcheck::solver::internal
