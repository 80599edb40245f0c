// Check 3, incarnation isolation by bounded model checking (E3, N2-N6): no unit debited to one
// incarnation is credited to another, and no old Flow is written after the replacement's
// Subscribe, on every interleaving of the actions of isolation.h up to `depth` steps, for every
// Q <= 8 and threshold 1 <= T <= Q.
#include "solver/internal/isolation.h"

#include <deque>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "solver/internal/checks.h"
#include "solver/internal/z3_util.h"
#include "spec/client_command.h"
#include "spec/permit_state.h"

namespace permitcheck::solver::internal {
namespace {

constexpr unsigned kIsoActionBits = 3;
constexpr unsigned kSlotBits = 3;
constexpr unsigned kMaxHeld = 200;

z3::expr counter(z3::context& ctx, unsigned n) { return ctx.bv_val(n, kIsoCounterBits); }

// The element of `v` at the symbolic index `i` (an ite chain; i <= v.size() - 1).
z3::expr select(const std::vector<z3::expr>& v, const z3::expr& i) {
  z3::expr out = v.back();
  for (int k = static_cast<int>(v.size()) - 2; k >= 0; --k) {
    out = z3::ite(i == i.ctx().bv_val(k, i.get_sort().bv_size()), v[static_cast<std::size_t>(k)], out);
  }
  return out;
}

spec::Id inc_id(int slot) { return spec::Id::number(static_cast<std::uint64_t>(slot + 1)); }
spec::Id cnx_id(int cnx) { return spec::Id::text(cnx == 0 ? "c1" : "c2"); }

}  // namespace

std::string iso_step_name(const IsoStep& s) {
  const std::string inc = absl::StrCat("(inc ", s.slot + 1, ", consumer ", iso_consumer(s.slot), ")");
  switch (s.action) {
    case IsoAction::kSubscribeOk:
      return "subscribe_ok" + inc;
    case IsoAction::kDeliver:
      return "deliver" + inc;
    case IsoAction::kReturn:
      return "return" + inc;
    case IsoAction::kRunTask:
      return "flow_task" + inc;
    case IsoAction::kCloseConsumer:
      return "close_consumer(consumer 0)";
    case IsoAction::kReconnect:
      return "reconnect";
  }
  return "?";
}

z3::expr IsoBad::any() const {
  return cross_after_close || cross_after_reconnect || old_flow || flow_not_enabled ||
         cross_consumer;
}

IsoModel::IsoModel(z3::context& ctx, const spec::Ruleset& rules)
    : ctx_(ctx),
      rules_(rules),
      q_(ctx.bv_const("iso.Q", kIsoCounterBits)),
      t_(ctx.bv_const("iso.T", kIsoCounterBits)) {
  IsoState s;
  for (int k = 0; k < kIsoSlots; ++k) {
    const bool first = k == 0 || k == 3;
    s.open.push_back(ctx.bool_val(first));
    s.current.push_back(ctx.bool_val(first));
    s.enabled.push_back(ctx.bool_val(false));
    s.ended_by_close.push_back(ctx.bool_val(false));
    s.cnx.push_back(ctx.bv_val(0, 1));
    s.acc.push_back(counter(ctx, 0));
    s.held.push_back(counter(ctx, 0));
    s.pending.push_back(counter(ctx, 0));
  }
  s.alive = {ctx.bool_val(true), ctx.bool_val(false)};
  states_.push_back(std::move(s));
}

z3::expr IsoModel::initial() const {
  return z3::uge(q_, counter(ctx_, 1)) && z3::ule(q_, counter(ctx_, kIsoMaxQ)) &&
         z3::uge(t_, counter(ctx_, 1)) && z3::ule(t_, q_);
}

z3::expr IsoModel::take_constraints() {
  z3::expr out = ctx_.bool_val(true);
  for (const z3::expr& e : pending_) out = out && e;
  pending_.clear();
  return out;
}

void IsoModel::extend() {
  const int n = depth() + 1;
  const IsoState& s = states_.back();
  IsoStepVars v{ctx_.bv_const(absl::StrCat("iso.", n, ".action").c_str(), kIsoActionBits),
                ctx_.bv_const(absl::StrCat("iso.", n, ".slot").c_str(), kSlotBits)};
  auto act = [&](IsoAction a) { return v.action == ctx_.bv_val(static_cast<unsigned>(a), kIsoActionBits); };
  auto is_slot = [&](int k) { return v.slot == ctx_.bv_val(k, kSlotBits); };
  const z3::expr yes = ctx_.bool_val(true);
  const z3::expr no = ctx_.bool_val(false);

  // Consumer 0's current incarnation and the slot of its next replacement.
  z3::expr has_c0 = no;
  for (int k = 0; k < 3; ++k) has_c0 = has_c0 || s.current[static_cast<std::size_t>(k)];
  const z3::expr cnx_c0 =
      z3::ite(s.current[0], s.cnx[0], z3::ite(s.current[1], s.cnx[1], s.cnx[2]));
  const z3::expr next_is1 = !s.open[1];
  const z3::expr next_is2 = s.open[1] && !s.open[2];
  const z3::expr has_next0 = next_is1 || next_is2;
  auto new0 = [&](int k) { return k == 1 ? next_is1 : (k == 2 ? next_is2 : no); };

  const z3::expr slot_ok = z3::ule(v.slot, ctx_.bv_val(kIsoSlots - 1, kSlotBits));
  z3::expr g_subscribe = no, g_deliver = no, g_return = no, g_task = no;
  for (int k = 0; k < kIsoSlots; ++k) {
    const auto i = static_cast<std::size_t>(k);
    const z3::expr alive_k = z3::ite(s.cnx[i] == ctx_.bv_val(0, 1), s.alive[0], s.alive[1]);
    g_subscribe = g_subscribe || (is_slot(k) && s.open[i] && s.current[i] && !s.enabled[i] && alive_k);
    g_deliver = g_deliver || (is_slot(k) && s.current[i] && s.enabled[i] &&
                              z3::ult(s.held[i], counter(ctx_, kMaxHeld)));
    g_return = g_return || (is_slot(k) && z3::uge(s.held[i], counter(ctx_, 1)));
    g_task = g_task || (is_slot(k) && z3::uge(s.pending[i], counter(ctx_, 1)));
  }
  const z3::expr close = act(IsoAction::kCloseConsumer);
  const z3::expr reconnect = act(IsoAction::kReconnect);
  const z3::expr ret = act(IsoAction::kReturn);
  const z3::expr task = act(IsoAction::kRunTask);
  const z3::expr guard =
      (act(IsoAction::kSubscribeOk) && g_subscribe) || (act(IsoAction::kDeliver) && g_deliver) ||
      (ret && g_return) || (task && g_task) ||
      (close && has_c0 && has_next0 && is_slot(0)) ||
      (reconnect && s.alive[0] && has_next0 && !s.open[4] && is_slot(0));
  pending_.push_back(slot_ok && guard);

  // Where a returned unit is credited (M1/N3, or the legacy consumer-wide scope).
  const z3::expr src_consumer1 = z3::uge(v.slot, ctx_.bv_val(3, kSlotBits));
  std::vector<z3::expr> hit;
  for (int k = 0; k < kIsoSlots; ++k) {
    const auto i = static_cast<std::size_t>(k);
    const z3::expr same_consumer = iso_consumer(k) == 1 ? src_consumer1 : !src_consumer1;
    z3::expr scope = is_slot(k);  // N3: only the retained incarnation
    if (rules_.return_scope == spec::ReturnScope::kCurrentConsumer) scope = same_consumer;
    if (rules_.return_scope == spec::ReturnScope::kSameConnection) {  // revision A (F5)
      scope = same_consumer && s.cnx[i] == select(s.cnx, v.slot);
    }
    hit.push_back(ret && s.current[i] && scope);
  }
  // Whether the slot's queued Flow tasks are written (N5 identity re-check, or legacy none).
  const z3::expr src_alive =
      z3::ite(select(s.cnx, v.slot) == ctx_.bv_val(0, 1), s.alive[0], s.alive[1]);
  const z3::expr written =
      task && src_alive &&
      (rules_.flow_recheck == spec::FlowRecheck::kIdentity
           ? select(s.current, v.slot) && select(s.enabled, v.slot)
           : yes);

  IsoState next;
  for (int k = 0; k < kIsoSlots; ++k) {
    const auto i = static_cast<std::size_t>(k);
    const z3::expr mine = is_slot(k);
    const z3::expr opened = (close && new0(k)) || (reconnect && (new0(k) || (k == 4 ? yes : no)));
    next.open.push_back(s.open[i] || opened);
    const z3::expr ends = (close && s.current[i] && (k < 3 ? yes : no)) ||
                          (reconnect && s.current[i] && s.cnx[i] == ctx_.bv_val(0, 1));
    next.current.push_back(z3::ite(opened, yes, z3::ite(ends, no, s.current[i])));
    next.enabled.push_back(s.enabled[i] || (act(IsoAction::kSubscribeOk) && mine));
    next.ended_by_close.push_back(s.ended_by_close[i] || (close && ends));
    next.cnx.push_back(z3::ite(close && new0(k), cnx_c0,
                               z3::ite(reconnect && opened, ctx_.bv_val(1, 1), s.cnx[i])));
    next.held.push_back(z3::ite(act(IsoAction::kDeliver) && mine, s.held[i] + counter(ctx_, 1),
                                z3::ite(ret && mine, s.held[i] - counter(ctx_, 1), s.held[i])));
    // N5: the accumulator reaches T, is swapped to 0 and a Flow task is queued.
    const z3::expr a1 = s.acc[i] + counter(ctx_, 1);
    const z3::expr swap = z3::uge(a1, t_);
    next.acc.push_back(z3::ite(hit[i], z3::ite(swap, counter(ctx_, 0), a1), s.acc[i]));
    next.pending.push_back(z3::ite(hit[i] && swap, s.pending[i] + a1,
                                   z3::ite(task && mine, counter(ctx_, 0), s.pending[i])));
  }
  next.alive = {s.alive[0] && !reconnect, s.alive[1] || reconnect};

  // The violations of this step.
  z3::expr crossed = no;
  z3::expr cross_consumer = no;
  for (int k = 0; k < kIsoSlots; ++k) {
    crossed = crossed || (hit[static_cast<std::size_t>(k)] && !is_slot(k));
    const z3::expr other = iso_consumer(k) == 1 ? !src_consumer1 : src_consumer1;
    cross_consumer = cross_consumer || (hit[static_cast<std::size_t>(k)] && other);
  }
  const z3::expr src_closed = select(s.ended_by_close, v.slot);
  z3::expr newer_same_cnx = no;  // the replacement's Subscribe went out on this connection
  for (int k = 0; k < kIsoSlots; ++k) {
    z3::expr newer = no;
    for (int j = k + 1; j < kIsoSlots; ++j) {
      if (iso_consumer(j) != iso_consumer(k)) continue;
      newer = newer || (s.open[static_cast<std::size_t>(j)] &&
                        s.cnx[static_cast<std::size_t>(j)] == s.cnx[static_cast<std::size_t>(k)]);
    }
    newer_same_cnx = newer_same_cnx || (is_slot(k) && newer);
  }
  bad_.push_back(IsoBad{
      .cross_after_close = crossed && src_closed,
      .cross_after_reconnect = crossed && !src_closed,
      .old_flow = written && newer_same_cnx,
      .flow_not_enabled = written && !select(s.enabled, v.slot),
      .cross_consumer = cross_consumer,
  });
  z3::expr credited = no;
  for (const z3::expr& h : hit) credited = credited || h;
  facts_.push_back(IsoFacts{.credited = credited, .flow_written = written || act(IsoAction::kSubscribeOk)});
  steps_.push_back(v);
  states_.push_back(std::move(next));
}

z3::expr IsoModel::step_is(int t, IsoAction action) const {
  return step(t).action == ctx_.bv_val(static_cast<unsigned>(action), kIsoActionBits);
}

z3::expr IsoModel::returned_old_unit(int t) const {
  return step_is(t, IsoAction::kReturn) && !select(state(t - 1).current, step(t).slot);
}

z3::expr IsoModel::ran_old_task(int t) const {
  return step_is(t, IsoAction::kRunTask) && !select(state(t - 1).current, step(t).slot);
}

std::vector<IsoStep> IsoModel::steps_from(const z3::model& m, int depth) const {
  std::vector<IsoStep> out;
  for (int t = 1; t <= depth; ++t) {
    const IsoStepVars& v = step(t);
    out.push_back(IsoStep{static_cast<IsoAction>(value(m, v.action)),
                          static_cast<int>(value(m, v.slot))});
  }
  return out;
}

IsoRun run_iso(const spec::Ruleset& rules, std::int64_t q, std::int64_t t,
               const std::vector<IsoStep>& steps) {
  IsoRun run;
  std::vector<std::optional<spec::PermitState>> states(kIsoSlots);
  std::vector<int> cnx(kIsoSlots, 0);
  std::vector<std::deque<spec::Id>> held(kIsoSlots);
  std::vector<std::vector<std::int64_t>> tasks(kIsoSlots);
  bool alive[2] = {true, false};
  std::uint64_t next_cmd = 1;
  auto open = [&](int slot, int c) {
    states[static_cast<std::size_t>(slot)].emplace(q, t);
    cnx[static_cast<std::size_t>(slot)] = c;
    run.events.push_back(spec::IncOpen{.inc = inc_id(slot), .cnx = cnx_id(c),
                                       .consumer = static_cast<std::uint64_t>(iso_consumer(slot))});
  };
  auto current_of = [&](int consumer) -> int {
    for (int k = 0; k < kIsoSlots; ++k) {
      const auto& st = states[static_cast<std::size_t>(k)];
      if (iso_consumer(k) == consumer && st && st->current()) return k;
    }
    return -1;
  };
  auto next0 = [&]() -> int {
    for (int k = 1; k < 3; ++k) {
      if (!states[static_cast<std::size_t>(k)]) return k;
    }
    return -1;
  };
  auto credit = [&](int slot, std::int64_t n) {
    auto& st = states[static_cast<std::size_t>(slot)];
    const absl::StatusOr<std::optional<std::int64_t>> flow = st->credit(n);
    if (flow.ok() && flow->has_value()) tasks[static_cast<std::size_t>(slot)].push_back(**flow);
  };
  open(0, 0);
  open(3, 0);
  for (const IsoStep& step : steps) {
    const int s = step.slot;
    const auto i = static_cast<std::size_t>(s >= 0 && s < kIsoSlots ? s : 0);
    auto& st = states[i];
    const spec::Id c = cnx_id(cnx[i]);
    const auto consumer = static_cast<std::uint64_t>(iso_consumer(s));
    switch (step.action) {
      case IsoAction::kSubscribeOk: {
        if (!st || !st->current() || st->flow_enabled() || !alive[cnx[i]]) { run.valid = false; return run; }
        const std::int64_t grant = *st->enable_flow();  // N4, decision 5: the initial grant Q
        run.events.push_back(spec::IncFlowEnabled{.inc = inc_id(s)});
        run.events.push_back(spec::Flow{.cnx = c, .consumer = consumer, .permits = grant, .inc = inc_id(s)});
        break;
      }
      case IsoAction::kDeliver: {
        if (!st || !st->current() || !st->flow_enabled() || held[i].size() >= kMaxHeld) {
          run.valid = false;
          return run;
        }
        const spec::CommandSituation sit{.inc = inc_id(s), .cmd = spec::Id::number(next_cmd++),
                                         .cnx = c, .message_permits = 1, .batch_size = 1};
        const spec::CommandRun cmd = spec::handle_command(rules, sit);
        run.events.insert(run.events.end(), cmd.events.begin(), cmd.events.end());
        for (const spec::Id& m : cmd.handed_off) held[i].push_back(m);
        break;
      }
      case IsoAction::kReturn: {
        if (held[i].empty()) { run.valid = false; return run; }
        const spec::Id m = held[i].front();
        held[i].pop_front();
        if (rules.return_scope == spec::ReturnScope::kIncarnation) {
          // M1/N3: to the retained state while it is current; otherwise dropped.
          if (st->current()) {
            run.events.push_back(spec::MsgReturn{.msg = m, .n = 1});
            credit(s, 1);
          } else {
            run.events.push_back(spec::Drop{.msg = m, .n = 1});
          }
        } else if (rules.return_scope == spec::ReturnScope::kSameConnection && !st->current()) {
          // Revision A (F5): the current incarnation when it is on the message's connection.
          const int target = current_of(iso_consumer(s));
          if (target >= 0 && cnx[static_cast<std::size_t>(target)] == cnx[i]) {
            run.events.push_back(spec::MsgReturn{.msg = m, .n = 1});
            credit(target, 1);
          } else {
            run.events.push_back(spec::Drop{.msg = m, .n = 1});
          }
        } else {
          // Legacy: the consumer object's current incarnation, whichever it is now.
          run.events.push_back(spec::MsgReturn{.msg = m, .n = 1});
          const int target = current_of(iso_consumer(s));
          if (target >= 0) credit(target, 1);
        }
        break;
      }
      case IsoAction::kRunTask: {
        if (tasks[i].empty()) { run.valid = false; return run; }
        for (const std::int64_t n : tasks[i]) {
          const bool write = alive[cnx[i]] && (rules.flow_recheck == spec::FlowRecheck::kNone ||
                                               st->may_write_flow());  // N5
          if (write) {
            run.events.push_back(spec::Flow{.cnx = c, .consumer = consumer, .permits = n, .inc = inc_id(s)});
          } else {
            run.events.push_back(spec::Drop{.n = n});
          }
        }
        tasks[i].clear();
        break;
      }
      case IsoAction::kCloseConsumer: {
        const int old = current_of(0);
        const int fresh = next0();
        if (old < 0 || fresh < 0) { run.valid = false; return run; }
        const int on = cnx[static_cast<std::size_t>(old)];
        run.events.push_back(spec::CloseConsumer{.cnx = cnx_id(on), .consumer = 0});
        run.events.push_back(spec::IncClose{.inc = inc_id(old), .reason = spec::CloseReason::kCloseConsumer});
        states[static_cast<std::size_t>(old)]->end();
        open(fresh, on);  // N2: a new permit state, same pooled connection
        break;
      }
      case IsoAction::kReconnect: {
        const int fresh = next0();
        if (!alive[0] || fresh < 0 || states[4]) { run.valid = false; return run; }
        alive[0] = false;
        alive[1] = true;
        run.events.push_back(spec::Disconnect{.cnx = cnx_id(0)});
        for (int k = 0; k < kIsoSlots; ++k) {
          auto& other = states[static_cast<std::size_t>(k)];
          if (other && other->current() && cnx[static_cast<std::size_t>(k)] == 0) {
            run.events.push_back(spec::IncClose{.inc = inc_id(k), .reason = spec::CloseReason::kDisconnect});
            other->end();
          }
        }
        run.events.push_back(spec::Connect{.cnx = cnx_id(1)});
        open(fresh, 1);
        open(4, 1);
        break;
      }
    }
  }
  for (int k = 0; k < kIsoSlots; ++k) {
    const auto i = static_cast<std::size_t>(k);
    run.acc.push_back(states[i] ? states[i]->accumulator() : 0);
    std::int64_t pending = 0;
    for (const std::int64_t n : tasks[i]) pending += n;
    run.pending.push_back(pending);
    run.held.push_back(static_cast<std::int64_t>(held[i].size()));
  }
  return run;
}

namespace {

struct IsoClass {
  std::string name;
  std::string row;  // legacy catalogue row
  z3::expr (*bad)(const IsoBad&);
};

const std::vector<IsoClass>& iso_classes() {
  static const std::vector<IsoClass> kClasses = {
      {"old return after CommandCloseConsumer, same pooled connection", "L7",
       [](const IsoBad& b) { return b.cross_after_close; }},
      {"old return after reconnect", "L6", [](const IsoBad& b) { return b.cross_after_reconnect; }},
      {"old Flow task after the replacement's Subscribe", "L11",
       [](const IsoBad& b) { return b.old_flow; }},
      {"Flow written before Subscribe succeeded", "", [](const IsoBad& b) { return b.flow_not_enabled; }},
      {"credit crosses consumer ids", "", [](const IsoBad& b) { return b.cross_consumer; }},
  };
  return kClasses;
}

Witness iso_witness(const spec::Ruleset& rules, const IsoModel& model, const z3::model& m,
                    int depth, const IsoClass& cls, bool minimal) {
  const std::int64_t q = static_cast<std::int64_t>(value(m, model.q()));
  const std::int64_t t = static_cast<std::int64_t>(value(m, model.t()));
  const std::vector<IsoStep> steps = model.steps_from(m, depth);
  const IsoRun run = run_iso(rules, q, t, steps);
  Witness w{.id = cls.row, .situation = cls.name};
  // Revision A credits a same-connection replacement: the review's F5 (rulebook 11), L7's path.
  if (rules.return_scope == spec::ReturnScope::kSameConnection && cls.row == "L7") w.id = "F5";
  w.header = spec::TraceHeader{.source = spec::TraceSource::kClient,
                               .ruleset = spec::RulesetId::kRevD, .q = q, .t = t};
  w.events = run.events;
  std::vector<std::string> names;
  for (const IsoStep& s : steps) names.push_back(iso_step_name(s));
  w.words = absl::StrCat("Q=", q, ", T=", t, ", ", depth, " steps: ", absl::StrJoin(names, ", "));
  w.minimal = minimal;
  judge(w);  // the caller rejects a witness the monitor does not confirm
  return w;
}

}  // namespace

CheckRun run_isolation(const spec::Ruleset& rules, const Bounds& b) {
  z3::context ctx;
  Query q(ctx, limits_of(b));
  IsoModel model(ctx, rules);
  q.add(model.initial());
  CheckRun run;
  run.bound = absl::StrCat("depth ", b.depth, ", Q<=", kIsoMaxQ);
  Counterexample cex;
  std::vector<bool> found(iso_classes().size(), false);
  bool any_bad = false;
  // BMC: one step at a time, the violations of the newest step checked under push/pop (earlier
  // steps were checked at their own depth, so the first depth that fails is the shortest).
  for (int d = 1; d <= b.depth; ++d) {
    model.extend();
    q.add(model.take_constraints());
    const IsoBad& bad = model.bad(d);
    const Answer a = q.check(bad.any());
    if (a.verdict == Verdict::kUnknown) {
      run.outcome = Unknown{absl::StrCat("depth ", d, ": ", a.reason)};
      run.queries = q.queries();
      return run;
    }
    if (a.verdict == Verdict::kUnsat) continue;
    any_bad = true;
    for (std::size_t c = 0; c < iso_classes().size(); ++c) {
      if (found[c]) continue;
      const IsoClass& cls = iso_classes()[c];
      q.push();
      q.add(cls.bad(bad));
      const Answer ac = q.check();
      if (ac.verdict == Verdict::kSat) {
        found[c] = true;
        Minimized m{q.model(), true};
        if (b.minimize) m = minimize(q, {model.q(), model.t()});
        Witness w = iso_witness(rules, model, m.model, d, cls, m.complete);
        if (w.finding == "no violation") {
          q.pop();
          run.outcome = Unknown{absl::StrCat("the monitor finds no violation in the witness: ", w.words)};
          run.queries = q.queries();
          return run;
        }
        cex.witnesses.push_back(std::move(w));
      }
      q.pop();
    }
  }
  run.queries = q.queries();
  if (any_bad && !cex.witnesses.empty()) {
    run.outcome = std::move(cex);
  } else if (any_bad) {
    run.outcome = Unknown{"a violation exists but no class reproduces it"};
  } else {
    run.outcome = Proved{absl::StrCat(
        "for every interleaving of up to ", b.depth,
        " steps (subscribe_ok, deliver, return, Flow task, CommandCloseConsumer, reconnect) of "
        "two consumers on one pooled connection, consumer 0 with up to three incarnations, "
        "Q <= ", kIsoMaxQ, " and 1 <= T <= Q: no unit of one incarnation is credited to "
        "another and no Flow is written for a replaced or not yet subscribed incarnation (E3 N2 "
        "N3 N4 N5 N6)")};
  }
  return run;
}

std::vector<VacuityItem> vacuity_isolation(const spec::Ruleset& rules, const Bounds& b) {
  z3::context ctx;
  Query q(ctx, limits_of(b));
  IsoModel model(ctx, rules);
  q.add(model.initial());
  for (int d = 1; d <= b.depth; ++d) {
    model.extend();
    q.add(model.take_constraints());
  }
  auto ever = [&](auto fact) {
    z3::expr out = ctx.bool_val(false);
    for (int d = 1; d <= b.depth; ++d) out = out || fact(d);
    return out;
  };
  std::vector<VacuityItem> out;
  out.push_back(vacuity_item(absl::StrCat("assumptions: ", b.depth, " steps are satisfiable"),
                             q.check(), true));
  const z3::expr closed = ever([&](int d) { return model.step_is(d, IsoAction::kCloseConsumer); });
  const z3::expr reconnected = ever([&](int d) { return model.step_is(d, IsoAction::kReconnect); });
  out.push_back(vacuity_item(
      "assumptions: an old unit returns after CommandCloseConsumer on the same connection",
      q.check(ever([&](int d) { return model.returned_old_unit(d); }) && closed && !reconnected),
      true));
  out.push_back(vacuity_item(
      "assumptions: an old unit returns after reconnect",
      q.check(ever([&](int d) { return model.returned_old_unit(d); }) && reconnected && !closed),
      true));
  out.push_back(vacuity_item(
      "assumptions: an old Flow task runs after the replacement's Subscribe",
      q.check(ever([&](int d) { return model.ran_old_task(d); })), true));
  out.push_back(vacuity_item(
      "assumptions: two replacements of consumer 0 and deliveries to consumer 1",
      q.check(closed && reconnected &&
              ever([&](int d) {
                return model.step_is(d, IsoAction::kDeliver) &&
                       z3::uge(model.step(d).slot, ctx.bv_val(3, kSlotBits));
              })),
      true));
  // Deliberately false variants of E3 and N6: refuted by a normal run.
  out.push_back(vacuity_item(
      "false variant refuted: E3 no returned unit is ever credited",
      q.check(ever([&](int d) { return model.facts(d).credited; })), true));
  out.push_back(vacuity_item(
      "false variant refuted: N6 no Flow is written after a replacement's Subscribe",
      q.check(ever([&](int d) {
        z3::expr replaced_before = ctx.bool_val(false);
        for (int e = 1; e < d; ++e) {
          replaced_before = replaced_before || model.step_is(e, IsoAction::kCloseConsumer);
        }
        return replaced_before && model.facts(d).flow_written;
      })),
      true));
  out.push_back(vacuity_item(
      "false variant refuted: N3 a replaced incarnation's unit never returns",
      q.check(ever([&](int d) { return model.returned_old_unit(d); })), true));
  return out;
}

}  // namespace permitcheck::solver::internal
