// Agreement: on random concrete inputs, each encoding with its inputs fixed computes what the
// specification's own functions compute (settle_amount, handle_command, finalize_permits,
// PermitState) and, for the incarnation model, flags a violation exactly when the Monitor
// reports one. A proof about an encoding is only worth what this agreement is worth.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "properties/generators.h"
#include "solver/internal/command_encoding.h"
#include "solver/internal/finalization.h"
#include "solver/internal/induction.h"
#include "solver/internal/isolation.h"
#include "solver/internal/z3_util.h"
#include "spec/client_command.h"
#include "spec/command_budget.h"
#include "spec/finalize.h"
#include "spec/monitor.h"
#include "spec/ruleset.h"

namespace permitcheck::solver::internal {
namespace {

// ---- Generators (composable values, as RapidCheck's own) ----

rc::Gen<const spec::Ruleset*> gen_ruleset() {
  return rc::gen::elementOf(std::vector<const spec::Ruleset*>(spec::all_rulesets().begin(),
                                                              spec::all_rulesets().end()));
}

rc::Gen<std::optional<spec::FailureStage>> gen_failure() {
  return rc::gen::weightedOneOf<std::optional<spec::FailureStage>>(
      {{4, rc::gen::just(std::optional<spec::FailureStage>())},
       {1, rc::gen::map(rc::gen::element(spec::FailureStage::kChecksum, spec::FailureStage::kMetadata,
                                         spec::FailureStage::kDecompress, spec::FailureStage::kBatch,
                                         spec::FailureStage::kInconsistent),
                        [](spec::FailureStage s) { return std::optional(s); })}});
}

rc::Gen<spec::IndexFate> gen_fate() {
  return rc::gen::weightedOneOf<spec::IndexFate>(
      {{6, rc::gen::just(spec::IndexFate::kDeliver)},
       {1, rc::gen::element(spec::IndexFate::kDuplicate, spec::IndexFate::kCompacted,
                            spec::IndexFate::kBeforeStart, spec::IndexFate::kDeadLetter,
                            spec::IndexFate::kHandoffFails, spec::IndexFate::kParseFails)}});
}

// A command inside the encoding's domain (B <= width, a single message has B = 1, chunks are
// single messages), with message_permits absent, consistent, off by a little, or any value.
spec::CommandSituation gen_command(int width) {
  spec::CommandSituation s{.inc = spec::Id::number(1), .cmd = spec::Id::number(1),
                           .cnx = spec::Id::text("c1")};
  s.batched = *rc::gen::arbitrary<bool>();
  s.batch_size = s.batched ? *rc::gen::inRange<std::int64_t>(0, width + 1) : 1;
  s.ack_set = *properties::gen_ack_set_below(width);
  const std::int64_t candidate = spec::candidate_permits(s.batch_size, s.ack_set);
  s.message_permits = *rc::gen::weightedOneOf<std::optional<std::uint64_t>>(
      {{2, rc::gen::just(std::optional<std::uint64_t>())},
       {4, rc::gen::just(std::optional<std::uint64_t>(static_cast<std::uint64_t>(candidate)))},
       {2, rc::gen::map(rc::gen::inRange<std::uint64_t>(0, 2 * static_cast<std::uint64_t>(width) + 2),
                        [](std::uint64_t v) { return std::optional(v); })},
       {1, rc::gen::map(rc::gen::arbitrary<std::uint64_t>(), [](std::uint64_t v) { return std::optional(v); })},
       {1, rc::gen::map(rc::gen::element<std::uint64_t>(2147483647ULL, 2147483648ULL, 4294967297ULL),
                        [](std::uint64_t v) { return std::optional(v); })}});
  s.early_failure = *rc::gen::weightedOneOf<std::optional<spec::FailureStage>>(
      {{5, rc::gen::just(std::optional<spec::FailureStage>())},
       {1, rc::gen::map(rc::gen::element(spec::FailureStage::kChecksum, spec::FailureStage::kMetadata,
                                         spec::FailureStage::kDecompress),
                        [](spec::FailureStage f) { return std::optional(f); })}});
  s.path = *rc::gen::weightedOneOf<spec::PayloadPath>(
      {{5, rc::gen::just(spec::PayloadPath::kNative)},
       {1, rc::gen::element(spec::PayloadPath::kChunkNonFinal, spec::PayloadPath::kChunkFinal,
                            spec::PayloadPath::kCryptoDiscard, spec::PayloadPath::kCryptoFail,
                            spec::PayloadPath::kCryptoConsume)}});
  if (s.path == spec::PayloadPath::kChunkNonFinal || s.path == spec::PayloadPath::kChunkFinal) {
    s.batched = false;
    s.batch_size = 1;
  }
  const auto n = static_cast<std::size_t>(s.batched ? std::max<std::int64_t>(s.batch_size, 0) : 1);
  s.fates = *rc::gen::container<std::vector<spec::IndexFate>>(n, gen_fate());
  return s;
}

z3::expr bv40(z3::context& ctx, std::int64_t v) { return ctx.bv_val(v, kCountBits); }

std::int64_t as_signed40(std::uint64_t v) {
  if ((v >> (kCountBits - 1)) & 1U) v |= ~std::uint64_t{0} << kCountBits;
  return static_cast<std::int64_t>(v);
}

// ---- settle_amount ----

RC_GTEST_PROP(SolverAgreement, SettleAmountEncodingAgreesWithSpec, ()) {
  const spec::Ruleset& rules = **gen_ruleset();
  spec::CommandProgress p;
  p.p = *rc::gen::inRange<std::int64_t>(0, 200);
  p.batch_size = *rc::gen::inRange<std::int64_t>(-3, 200);
  p.claimed = *rc::gen::inRange<std::int64_t>(0, p.p + 3);
  p.skipped = *rc::gen::inRange<std::int64_t>(0, 20);
  p.direct_returned = *rc::gen::inRange<std::int64_t>(0, 20);
  p.failure = *gen_failure();
  p.transferred = *rc::gen::arbitrary<bool>();
  z3::context ctx;
  const SymProgress sp{
      .p = bv40(ctx, p.p),
      .batch_size = bv40(ctx, p.batch_size),
      .claimed = bv40(ctx, p.claimed),
      .skipped = bv40(ctx, p.skipped),
      .direct = bv40(ctx, p.direct_returned),
      .failure = ctx.bv_val(p.failure ? failure_code(*p.failure) : 0U, 3),
      .transferred = ctx.bool_val(p.transferred),
  };
  const z3::expr settle = encode_settle_amount(rules, sp).simplify();
  std::uint64_t got = 0;
  RC_ASSERT(settle.is_numeral_u64(got));
  RC_ASSERT(as_signed40(got) == spec::settle_amount(rules, p));
}

// ---- handle_command ----

RC_GTEST_PROP(SolverAgreement, CommandEncodingAgreesWithHandleCommand, ()) {
  const spec::Ruleset& rules = **gen_ruleset();
  const int width = *rc::gen::element(8, 64, 130);
  const spec::CommandSituation s = gen_command(width);
  z3::context ctx;
  const CommandVars v = make_command_vars(ctx, static_cast<unsigned>(width), "c");
  const CommandOutcome out = encode_command(rules, v);
  std::vector<z3::expr> inputs = fix_command(v, s);
  inputs.push_back(command_domain(v));
  const std::optional<z3::model> m = model_with(ctx, inputs);
  RC_ASSERT(m.has_value());  // the situation is inside the encoding's domain

  const spec::CommandRun run = spec::handle_command(rules, s);
  std::int64_t direct = 0;
  std::int64_t settle = 0;
  std::optional<std::int64_t> resolved;
  for (const spec::Event& e : run.events) {
    if (const auto* d = std::get_if<spec::DirectReturn>(&e)) direct += d->n;
    if (const auto* st = std::get_if<spec::Settle>(&e)) settle += st->n;
    if (const auto* r = std::get_if<spec::Resolve>(&e)) resolved = r->p;
  }
  const auto claimed = static_cast<std::int64_t>(run.handed_off.size());
  RC_TAG(std::string(rules.name), run.closes_connection ? "protocol error"
                                  : s.early_failure  ? "early failure"
                                  : direct > 0       ? "direct return"
                                  : s.batched        ? "batch"
                                                     : "single");
  RC_ASSERT(truth(*m, out.protocol_error) == run.closes_connection);
  RC_ASSERT(static_cast<std::int64_t>(value(*m, out.claimed)) == claimed);
  RC_ASSERT(static_cast<std::int64_t>(value(*m, out.direct)) == direct);
  RC_ASSERT(static_cast<std::int64_t>(value(*m, out.settle)) == settle);
  RC_ASSERT(static_cast<std::int64_t>(value(*m, out.total)) == claimed + direct + settle);
  if (resolved && !run.closes_connection) {
    RC_ASSERT(static_cast<std::int64_t>(value(*m, out.p)) == *resolved);
  }
  // B2/B3: the broker's candidate, from the same partition of the indexes.
  RC_ASSERT(static_cast<std::int64_t>(value(*m, candidate(v))) ==
            spec::candidate_permits(s.batch_size, s.ack_set));
}

// ---- finalize_permits ----

RC_GTEST_PROP(SolverAgreement, SendEncodingAgreesWithFinalizePermits, ()) {
  const spec::Ruleset& rules = **gen_ruleset();
  const spec::DispatcherKind kind = *rc::gen::elementOf(std::vector<spec::DispatcherKind>(
      spec::all_dispatcher_kinds().begin(), spec::all_dispatcher_kinds().end()));
  constexpr int kKmax = 4;
  constexpr int kBits = 64;
  const int k = *rc::gen::inRange(1, kKmax + 1);
  std::vector<spec::SendEntry> entries;
  for (int i = 0; i < k; ++i) {
    spec::SendEntry e;
    e.batch_size = *rc::gen::weightedOneOf<std::int64_t>(
        {{6, rc::gen::inRange<std::int64_t>(-2, 80)},
         {1, rc::gen::inRange<std::int64_t>(spec::kMaxPermits - 3, spec::kMaxPermits + 3)},
         {1, rc::gen::arbitrary<std::int64_t>()}});
    e.ack_set = *properties::gen_ack_set_below(kBits);
    e.admitted = *rc::gen::arbitrary<bool>();
    entries.push_back(std::move(e));
  }
  z3::context ctx;
  const SendVars v = make_send_vars(ctx, kKmax, kBits);
  const SendOutcome o = encode_send(rules, kind, v);
  std::vector<z3::expr> inputs = fix_send(v, entries);
  inputs.push_back(send_domain(v));
  const std::optional<z3::model> m = model_with(ctx, inputs);
  RC_ASSERT(m.has_value());

  const spec::SendResult r = spec::finalize_permits(rules, kind, entries);
  RC_TAG(r.overflow ? "overflow" : "finalized");
  // B8: both stop at the same entry and keep (and debit) the entries before it.
  RC_ASSERT(truth(*m, o.error) == r.overflow.has_value());
  RC_ASSERT(static_cast<std::int64_t>(value(*m, o.consumer_debit)) == r.consumer_debit);
  RC_ASSERT(static_cast<std::int64_t>(value(*m, o.dispatcher_debit)) == r.dispatcher_debit.value_or(0));
  RC_ASSERT(static_cast<std::int64_t>(value(*m, o.unacked)) == r.unacked_increase);
  RC_ASSERT(static_cast<std::int64_t>(value(*m, o.finalized_sum)) == r.finalized_sum);
  std::size_t next = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (!truth(*m, o.finalized[i])) continue;
    RC_ASSERT(next < r.commands.size());
    RC_ASSERT(r.commands[next].entry == i);
    ++next;
  }
  RC_ASSERT(next == r.commands.size());
}

// ---- the incarnation model ----

std::vector<IsoStep> gen_iso_steps(const spec::Ruleset& rules, std::int64_t q, std::int64_t t) {
  const int n = *rc::gen::inRange(0, 21);
  std::vector<IsoStep> steps;
  // Nothing happens before a Subscribe succeeds: usually start there.
  if (*rc::gen::weightedElement<bool>({{4, true}, {1, false}})) {
    steps = {{IsoAction::kSubscribeOk, 0}, {IsoAction::kSubscribeOk, 3}};
  }
  for (int i = 0; i < 10 * n && static_cast<int>(steps.size()) < n; ++i) {
    // Weighted towards the dangerous pattern: hand-off, replacement, late return or Flow task.
    IsoStep step{*rc::gen::weightedElement<IsoAction>({{3, IsoAction::kSubscribeOk},
                                                       {3, IsoAction::kDeliver},
                                                       {4, IsoAction::kReturn},
                                                       {3, IsoAction::kRunTask},
                                                       {2, IsoAction::kCloseConsumer},
                                                       {1, IsoAction::kReconnect}}),
                 *rc::gen::weightedElement<int>({{5, 0}, {3, 1}, {2, 2}, {1, 3}, {1, 4}})};
    if (step.action == IsoAction::kCloseConsumer || step.action == IsoAction::kReconnect) step.slot = 0;
    std::vector<IsoStep> tried = steps;
    tried.push_back(step);
    if (run_iso(rules, q, t, tried).valid) steps = std::move(tried);
  }
  return steps;
}

RC_GTEST_PROP(SolverAgreement, IsolationEncodingAgreesWithPermitStateAndMonitor, ()) {
  const spec::Ruleset& rules = **gen_ruleset();
  const std::int64_t q = *rc::gen::inRange<std::int64_t>(1, kIsoMaxQ + 1);
  const std::int64_t t = *rc::gen::inRange<std::int64_t>(1, q + 1);
  const std::vector<IsoStep> steps = gen_iso_steps(rules, q, t);
  const IsoRun run = run_iso(rules, q, t, steps);
  RC_ASSERT(run.valid);

  z3::context ctx;
  IsoModel model(ctx, rules);
  std::vector<z3::expr> inputs = {model.initial(), model.q() == ctx.bv_val(q, kIsoCounterBits),
                                  model.t() == ctx.bv_val(t, kIsoCounterBits)};
  z3::expr bad = ctx.bool_val(false);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    model.extend();
    const int d = static_cast<int>(i) + 1;
    inputs.push_back(model.take_constraints());
    inputs.push_back(model.step(d).action == ctx.bv_val(static_cast<unsigned>(steps[i].action), 3));
    inputs.push_back(model.step(d).slot == ctx.bv_val(steps[i].slot, 3));
    bad = bad || model.bad(d).any();
  }
  const std::optional<z3::model> m = model_with(ctx, inputs);
  RC_ASSERT(m.has_value());  // the encoding accepts every run the concrete model accepts
  const IsoState& last = model.state(model.depth());
  for (int k = 0; k < kIsoSlots; ++k) {
    const auto i = static_cast<std::size_t>(k);
    RC_ASSERT(static_cast<std::int64_t>(value(*m, last.acc[i])) == run.acc[i]);
    RC_ASSERT(static_cast<std::int64_t>(value(*m, last.pending[i])) == run.pending[i]);
    RC_ASSERT(static_cast<std::int64_t>(value(*m, last.held[i])) == run.held[i]);
  }
  const spec::MonitorReport report = spec::check_trace(
      spec::TraceHeader{.source = spec::TraceSource::kClient, .ruleset = spec::RulesetId::kRevD,
                        .q = q, .t = t},
      run.events);
  RC_TAG(std::string(rules.name), report.violations.empty() ? "no violation" : "violation");
  RC_ASSERT(truth(*m, bad) == !report.violations.empty());
}

// ---- the flow-control loop ----

RC_GTEST_PROP(SolverAgreement, InductionEncodingAgreesWithPermitState, ()) {
  const spec::Ruleset& rules = **gen_ruleset();
  constexpr int kBmax = 8;
  const std::int64_t q = *rc::gen::inRange<std::int64_t>(1, 40);
  const std::int64_t t = *rc::gen::inRange<std::int64_t>(1, q + 1);
  const int n = *rc::gen::inRange(0, 9);
  // Broker-side counters, to pick only steps whose guard holds.
  std::int64_t avail = q, wire = 0, wflow = 0;
  std::vector<IndConcreteStep> steps;
  for (int i = 0; i < 4 * n && static_cast<int>(steps.size()) < n; ++i) {
    IndConcreteStep s{.action = static_cast<IndAction>(*rc::gen::inRange(0, static_cast<int>(kIndActions)))};
    const IndRun before = run_ind(rules, q, t, steps, /*drain=*/false);
    switch (s.action) {
      case IndAction::kDispatch:
        if (avail <= 0) continue;
        s.n = *rc::gen::inRange<std::int64_t>(1, kBmax + 1);
        avail -= s.n;
        wire += s.n;
        break;
      case IndAction::kReceive: {
        spec::CommandSituation c = gen_command(kBmax);
        const std::int64_t p = spec::candidate_permits(c.batch_size, c.ack_set);
        if (p < 1 || p > wire || c.path == spec::PayloadPath::kCryptoFail ||
            (c.path == spec::PayloadPath::kCryptoDiscard && p != c.batch_size)) {
          continue;
        }
        c.message_permits = static_cast<std::uint64_t>(p);  // honest wire
        s.command = c;
        wire -= p;
        break;
      }
      case IndAction::kReturn:
        if (before.held == 0) continue;
        break;
      case IndAction::kFlowTask:
        if (before.tasks == 0) continue;
        s.n = before.tasks;  // every queued task runs
        wflow += s.n;
        break;
      case IndAction::kBrokerFlow:
        if (wflow == 0) continue;
        s.n = *rc::gen::inRange<std::int64_t>(1, wflow + 1);
        wflow -= s.n;
        avail += s.n;
        break;
      case IndAction::kReplaceClose:
      case IndAction::kReplaceReconnect:
        avail = q;
        wire = 0;
        wflow = 0;
        break;
      case IndAction::kOldReturn:
      case IndAction::kOldFlowTask:
        continue;  // replaced incarnations are compared by the monitor tests
    }
    steps.push_back(std::move(s));
  }
  const IndRun run = run_ind(rules, q, t, steps, /*drain=*/false);
  RC_ASSERT(run.valid);

  z3::context ctx;
  IndSystem sys(ctx, rules, kBmax);
  const IndPath path = unroll_from_init(sys, static_cast<int>(steps.size()));
  std::vector<z3::expr> inputs = {path.constraints, sys.q() == ctx.int_val(q), sys.t() == ctx.int_val(t)};
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const IndStep& st = path.steps[i];
    inputs.push_back(st.action == ctx.bv_val(static_cast<unsigned>(steps[i].action), 4));
    inputs.push_back(st.n == ctx.int_val(steps[i].n));
    if (steps[i].action == IndAction::kReceive) {
      for (const z3::expr& e : fix_command(st.cmd, steps[i].command)) inputs.push_back(e);
    }
  }
  const std::optional<z3::model> m = model_with(ctx, inputs);
  RC_ASSERT(m.has_value());
  const IndState& last = path.states.back();
  RC_ASSERT(signed_value(*m, last.acc) == run.acc);
  RC_ASSERT(signed_value(*m, last.held) == run.held);
  RC_ASSERT(signed_value(*m, last.tasks) == run.tasks);
  RC_ASSERT(signed_value(*m, last.avail) == avail);
  if (rules.id == spec::RulesetId::kRevD) RC_ASSERT(truth(*m, sys.invariant(last)));
}

}  // namespace
}  // namespace permitcheck::solver::internal
