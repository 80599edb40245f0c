// Check 2, finalization (B1-B8, E4): for every send of k <= kmax entries (B_i any int64,
// ack_set_i absent or any ack_bits-bit set, admitted_i) and every dispatcher kind, the consumer
// debit, the dispatcher aggregate debit, the unacked increase and the sum of the serialized
// message_permits all equal the finalized ΣP, each P is in 1..min(B, 2^31-1), and an overflow
// stops the send at the overflowing entry (the entries before it stay finalized and debited, B8).
#include "solver/internal/finalization.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "solver/internal/checks.h"
#include "spec/monitor.h"
#include "spec/plain_text.h"

namespace permitcheck::solver::internal {
namespace {

z3::expr sum_val(z3::context& ctx, std::uint64_t n) { return ctx.bv_val(n, kSumBits); }

// B6 / F2: whether `kind`'s aggregate is debited with the finalized sum under `rules`.
bool aggregate_uses_finalized(const spec::Ruleset& rules, spec::DispatcherKind kind) {
  switch (rules.finalized_dispatchers) {
    case spec::DispatcherCoverage::kAllSix:
      return true;
    case spec::DispatcherCoverage::kPersistentSharedOnly:
      return !spec::is_sticky_key(kind);
    case spec::DispatcherCoverage::kNone:
      return false;
  }
  return true;
}

}  // namespace

SendVars make_send_vars(z3::context& ctx, unsigned kmax, unsigned ack_bits) {
  SendVars v{.kmax = kmax,
             .ack_bits = ack_bits,
             .k = ctx.bv_const("send.k", bits_for(kmax) + 1),
             .entries = {}};
  for (unsigned i = 0; i < kmax; ++i) {
    const std::string p = absl::StrCat("send.", i, ".");
    v.entries.push_back(EntryVars{
        .batch_size = ctx.bv_const((p + "B").c_str(), 64),
        .ack_present = ctx.bool_const((p + "ack_present").c_str()),
        .ack = ctx.bv_const((p + "ack").c_str(), ack_bits),
        .admitted = ctx.bool_const((p + "admitted").c_str()),
        .abstract_candidate = ctx.bv_const((p + "candidate").c_str(), kSumBits),
    });
  }
  return v;
}

z3::expr send_domain(const SendVars& v) {
  z3::context& ctx = v.k.ctx();
  const unsigned w = v.k.get_sort().bv_size();
  z3::expr out = z3::uge(v.k, ctx.bv_val(1, w)) && z3::ule(v.k, ctx.bv_val(v.kmax, w));
  for (const EntryVars& e : v.entries) {
    out = out && z3::ule(e.abstract_candidate,
                         ctx.bv_val(static_cast<std::uint64_t>(INT64_MAX), kSumBits));
  }
  return out;
}

z3::expr used(const SendVars& v, unsigned i) {
  return z3::ult(v.k.ctx().bv_val(i, v.k.get_sort().bv_size()), v.k);
}

SendOutcome encode_send(const spec::Ruleset& rules, spec::DispatcherKind kind, const SendVars& v,
                        PopcountEncoding pc, bool abstract_candidates) {
  z3::context& ctx = v.k.ctx();
  const unsigned w = v.ack_bits;
  const z3::expr zero = sum_val(ctx, 0);
  const z3::expr max_permits = sum_val(ctx, static_cast<std::uint64_t>(spec::kMaxPermits));
  SendOutcome o{.candidate = {}, .finalized = {}, .finalized_sum = zero,
                .pre_admission_sum = zero, .error = ctx.bool_val(false),
                .consumer_debit = zero, .dispatcher_debit = zero, .unacked = zero,
                .serialized_sum = zero, .consumer_ok = ctx.bool_val(true),
                .dispatcher_ok = ctx.bool_val(true), .unacked_ok = ctx.bool_val(true),
                .serialized_ok = ctx.bool_val(true), .range_ok = ctx.bool_val(true),
                .bounded_ok = ctx.bool_val(true), .debits_ok = ctx.bool_val(true),
                .ok = ctx.bool_val(true)};
  // Which sums the ruleset computes for this dispatcher (every computed sum is checked, B8).
  const bool consumer_finalized = rules.consumer_debit == spec::DebitSource::kFinalized;
  const bool aggregate = spec::has_aggregate(kind);
  const bool aggregate_finalized = aggregate_uses_finalized(rules, kind);
  const bool needs_pre = !consumer_finalized || (aggregate && !aggregate_finalized);

  z3::expr range_ok = ctx.bool_val(true);
  z3::expr stopped = ctx.bool_val(false);  // B8: an earlier entry overflowed a checked sum
  for (unsigned i = 0; i < v.kmax; ++i) {
    const EntryVars& e = v.entries[i];
    // B2: bits at or beyond B are ignored; B <= 0 has nothing to deliver (B3).
    const z3::expr positive = z3::sgt(e.batch_size, ctx.bv_val(0, 64));
    const z3::expr capped = z3::ite(z3::ugt(e.batch_size, ctx.bv_val(w, 64)), ctx.bv_val(w, 64),
                                    e.batch_size);
    const z3::expr cand =
        abstract_candidates
            ? e.abstract_candidate
            : z3::ite(!positive, zero,
                      z3::ite(e.ack_present,
                              popcount(e.ack & low_mask(resize(capped, w)), kSumBits, pc),
                              resize(e.batch_size, kSumBits)));
    const z3::expr finalizes = e.admitted && z3::uge(cand, sum_val(ctx, 1));  // B1, B3
    // B8: the entry that would take a checked sum past 2^31-1 stops the send; it and every
    // later entry make no command and no debit, the entries before it stay (decision 11).
    const z3::expr active = used(v, i) && !stopped;
    z3::expr over = finalizes && z3::ugt(o.finalized_sum + cand, max_permits);
    if (needs_pre) over = over || z3::ugt(o.pre_admission_sum + cand, max_permits);
    over = active && over;
    const z3::expr fin = active && !over && finalizes;
    o.candidate.push_back(cand);
    o.finalized.push_back(fin);
    o.pre_admission_sum = o.pre_admission_sum + z3::ite(active && !over, cand, zero);
    o.finalized_sum = o.finalized_sum + z3::ite(fin, cand, zero);
    stopped = stopped || over;
    // B8: each finalized P is <= B (and <= 2^31-1, else the send stops: see `error`).
    o.entry_range_ok.push_back(z3::implies(positive, z3::sle(resize(cand, 64), e.batch_size)));
    range_ok = range_ok && z3::implies(fin, z3::ule(cand, max_permits) &&
                                                z3::sle(resize(cand, 64), e.batch_size));
  }
  o.error = stopped;

  const z3::expr consumer = consumer_finalized ? o.finalized_sum : o.pre_admission_sum;
  o.consumer_debit = consumer;
  if (aggregate) o.dispatcher_debit = aggregate_finalized ? o.finalized_sum : o.pre_admission_sum;
  o.unacked = spec::acks_individually(kind) ? o.finalized_sum : zero;
  if (rules.broker_sends_message_permits) {  // B7, W3: on every command
    z3::expr serialized = zero;
    for (unsigned i = 0; i < v.kmax; ++i) {
      serialized = serialized + z3::ite(o.finalized[i], o.candidate[i], zero);
    }
    o.serialized_sum = serialized;
  }

  // The properties: one finalized value everywhere (E4), an overflowing send included (B8:
  // the value of the entries before the overflowing one).
  const z3::expr fin_sum = o.finalized_sum;
  o.consumer_ok = o.consumer_debit == fin_sum;
  o.dispatcher_ok = aggregate ? o.dispatcher_debit == fin_sum : ctx.bool_val(true);
  o.unacked_ok = spec::acks_individually(kind) ? o.unacked == fin_sum : ctx.bool_val(true);
  o.serialized_ok = rules.broker_sends_message_permits
                        ? o.serialized_sum == fin_sum
                        : ctx.bool_val(true);  // an old broker sends no field (W3, C6)
  o.range_ok = range_ok;
  // B8: whatever stops the send, what it debits stays within 2^31-1.
  o.bounded_ok = z3::ule(o.consumer_debit, max_permits) &&
                 z3::ule(o.dispatcher_debit, max_permits) && z3::ule(o.unacked, max_permits);
  o.debits_ok = o.consumer_ok && o.dispatcher_ok && o.unacked_ok && o.serialized_ok && o.bounded_ok;
  o.ok = o.debits_ok && o.range_ok;
  return o;
}

std::vector<spec::SendEntry> entries_from(const z3::model& m, const SendVars& v) {
  std::vector<spec::SendEntry> out;
  const std::uint64_t k = value(m, v.k);
  for (unsigned i = 0; i < v.kmax && i < k; ++i) {
    const EntryVars& e = v.entries[i];
    spec::SendEntry entry{.batch_size = signed_value(m, e.batch_size),
                          .admitted = truth(m, e.admitted)};
    if (truth(m, e.ack_present)) {
      std::vector<std::int64_t> ws;
      for (std::uint64_t word : words(m, e.ack)) ws.push_back(static_cast<std::int64_t>(word));
      entry.ack_set = spec::AckSet(std::move(ws));
    }
    out.push_back(std::move(entry));
  }
  return out;
}

std::vector<z3::expr> fix_send(const SendVars& v, const std::vector<spec::SendEntry>& entries) {
  z3::context& ctx = v.k.ctx();
  std::vector<z3::expr> out;
  out.push_back(v.k == ctx.bv_val(static_cast<unsigned>(entries.size()), v.k.get_sort().bv_size()));
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const EntryVars& e = v.entries[i];
    out.push_back(e.batch_size == ctx.bv_val(static_cast<std::int64_t>(entries[i].batch_size), 64));
    out.push_back(e.admitted == ctx.bool_val(entries[i].admitted));
    out.push_back(e.ack_present == ctx.bool_val(!entries[i].ack_set.absent()));
    std::vector<std::uint64_t> ws;
    for (std::int64_t word : entries[i].ack_set.words()) ws.push_back(static_cast<std::uint64_t>(word));
    out.push_back(e.ack == bv_from_words(ctx, ws, v.ack_bits));
  }
  return out;
}

namespace {

unsigned ack_bits_of(const Bounds& b) { return static_cast<unsigned>(b.bmax); }

std::vector<z3::expr> objectives(z3::context& ctx, const SendVars& v, const SendOutcome& o,
                                 PopcountEncoding pc) {
  // An L8-like send first: at least one command went out. Then few, small entries.
  z3::expr none = ctx.bool_val(true);
  for (const z3::expr& f : o.finalized) none = none && !f;
  std::vector<z3::expr> out = {bit(none), v.k};
  for (const EntryVars& e : v.entries) out.push_back(bit(!e.admitted));  // rejections last
  for (const EntryVars& e : v.entries) {
    out.push_back(e.batch_size);
    out.push_back(bit(e.ack_present));
    out.push_back(popcount(e.ack, 16, pc));
    out.push_back(resize(e.ack, std::min(64u, v.ack_bits)));
  }
  return out;
}

std::string describe_send(spec::DispatcherKind kind, const std::vector<spec::SendEntry>& entries,
                          const spec::SendResult& r) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const spec::SendEntry& e = entries[i];
    const std::string ack =
        e.ack_set.absent() ? "ack_set absent" : spec::acknowledged_text(e.ack_set, e.batch_size);
    parts.push_back(absl::StrCat("#", i + 1, " B=", e.batch_size, " ", ack, " ",
                                 e.admitted ? "admitted" : "rejected by pending-ack admission"));
  }
  std::string out = absl::StrCat(std::string(spec::dispatcher_name(kind)), ": ", entries.size(),
                                 entries.size() == 1 ? " entry (" : " entries (",
                                 absl::StrJoin(parts, "; "), ")");
  if (r.overflow) absl::StrAppend(&out, "; ", r.overflow->reason, ", the send stops there");
  absl::StrAppend(&out, "; consumer debited ", r.consumer_debit);
  if (r.dispatcher_debit) absl::StrAppend(&out, ", aggregate debited ", *r.dispatcher_debit);
  absl::StrAppend(&out, ", ", r.commands.size(), r.commands.size() == 1 ? " command" : " commands",
                  " sent, finalized ΣP=", r.finalized_sum);
  const std::int64_t diff = r.consumer_debit - r.finalized_sum;
  if (diff > 0) absl::StrAppend(&out, " (", spec::count_noun(diff, "permit"), " lost)");
  if (diff < 0) absl::StrAppend(&out, " (", spec::count_noun(-diff, "permit"), " over-granted)");
  return out;
}

struct FinalizationEncoding {
  SendVars v;
  std::vector<std::pair<spec::DispatcherKind, SendOutcome>> kinds;
};

FinalizationEncoding encode_finalization(z3::context& ctx, const spec::Ruleset& rules,
                                          const Bounds& b, bool abstract_candidates = false) {
  FinalizationEncoding e{make_send_vars(ctx, static_cast<unsigned>(b.kmax), ack_bits_of(b)), {}};
  for (spec::DispatcherKind kind : spec::all_dispatcher_kinds()) {
    e.kinds.emplace_back(kind, encode_send(rules, kind, e.v, popcount_of(b), abstract_candidates));
  }
  return e;
}

}  // namespace

// A minimal witness that `kind` breaks the debit properties, or nullopt (unsat or unknown:
// `unknown` says which).
std::optional<Witness> find_witness(const spec::Ruleset& rules, spec::DispatcherKind kind,
                                    const Bounds& b, std::string* unknown, int* queries,
                                    std::string* disagreement) {
  z3::context ctx;
  Query q(ctx, limits_of(b));
  const FinalizationEncoding e = encode_finalization(ctx, rules, b);
  q.add(send_domain(e.v));
  const SendOutcome* o = nullptr;
  for (const auto& [k, out] : e.kinds) {
    if (k == kind) o = &out;
  }
  q.add(!o->debits_ok);
  const Answer a = q.check();
  *queries += q.queries();
  if (a.verdict != Verdict::kSat) {
    if (a.verdict == Verdict::kUnknown) *unknown = a.reason;
    return std::nullopt;
  }
  Minimized m{q.model(), true};
  if (b.minimize) m = minimize(q, objectives(ctx, e.v, *o, popcount_of(b)));
  *queries = q.queries();
  const std::vector<spec::SendEntry> entries = entries_from(m.model, e.v);
  const spec::SendResult r = spec::finalize_permits(rules, kind, entries);
  // The spec must agree with the encoding on where the send stopped and what was debited.
  const bool error = truth(m.model, o->error);
  if (r.overflow.has_value() != error ||
      r.consumer_debit != static_cast<std::int64_t>(value(m.model, o->consumer_debit))) {
    *disagreement = absl::StrCat("encoding and spec disagree on ", describe_send(kind, entries, r));
    return std::nullopt;
  }
  Witness w{.id = "L8", .situation = absl::StrCat("send to ", std::string(spec::dispatcher_name(kind)))};
  // Revision B left the sticky-key aggregates on the pre-admission sum: the review's F2.
  if (rules.finalized_dispatchers == spec::DispatcherCoverage::kPersistentSharedOnly &&
      spec::is_sticky_key(kind)) {
    w.id = "F2";
  }
  w.header = spec::TraceHeader{.source = spec::TraceSource::kBroker, .ruleset = spec::RulesetId::kRevD};
  spec::Send send{.consumer = 0,
                  .dispatcher = kind,
                  .consumer_debit = r.consumer_debit,
                  .dispatcher_debit = r.dispatcher_debit};
  for (std::size_t i = 0; i < entries.size(); ++i) {
    spec::SentEntry se{.cmd = spec::Id::number(i + 1), .entry = entries[i], .p = std::nullopt};
    for (const spec::FinalizedCommand& f : r.commands) {
      if (f.entry == i) se.p = f.p;
    }
    send.entries.push_back(std::move(se));
  }
  w.events.push_back(std::move(send));
  w.words = describe_send(kind, entries, r);
  w.minimal = m.complete;
  if (!judge(w)) {  // never report a counterexample the oracle does not confirm
    *disagreement = absl::StrCat("the monitor finds no violation in the witness: ", w.words);
    return std::nullopt;
  }
  return w;
}

CheckRun run_finalization(const spec::Ruleset& rules, const Bounds& b) {
  z3::context ctx;
  Query q(ctx, limits_of(b));
  // the debits
  const FinalizationEncoding a = encode_finalization(ctx, rules, b, /*abstract_candidates=*/true);
  const SendOutcome concrete = encode_send(rules, spec::DispatcherKind::kPersistentShared, a.v,
                                           popcount_of(b));  // B2's candidates: the range of P
  q.add(send_domain(a.v));
  CheckRun run;
  run.bound = absl::StrCat("k<=", b.kmax, ", ", ack_bits_of(b), "-bit ack_set, 7 dispatchers");
  Counterexample cex;
  std::string unknown;
  // B2/B8's range of each P: every slot is encoded alike, so slot 0 stands for all of them.
  const Answer range = q.check(!concrete.entry_range_ok.front());
  if (range.verdict == Verdict::kUnknown) unknown = absl::StrCat("range of P: ", range.reason);
  if (range.verdict == Verdict::kSat) unknown = "range of P violated (B2/B8)";
  int extra_queries = 0;
  for (const auto& [kind, o] : a.kinds) {
    const Answer debits = q.check(!o.debits_ok);
    if (debits.verdict == Verdict::kUnsat) continue;
    if (debits.verdict == Verdict::kUnknown) {
      unknown = absl::StrCat(std::string(spec::dispatcher_name(kind)), ": ", debits.reason);
      continue;
    }
    std::string disagreement;
    std::optional<Witness> w;
    for (const int width : {kSmallWidth, b.bmax}) {
      if (width > b.bmax) continue;
      Bounds at = b;
      at.bmax = width;
      std::string why;
      w = find_witness(rules, kind, at, &why, &extra_queries, &disagreement);
      if (w || !disagreement.empty()) break;
      if (width == b.bmax) {
        // The abstract debits fail but no concrete send does: proved concretely, unless the
        // concrete query was unknown.
        if (!why.empty()) unknown = absl::StrCat(std::string(spec::dispatcher_name(kind)), ": ", why);
        break;
      }
    }
    if (!disagreement.empty()) {
      run.outcome = Unknown{disagreement};
      run.queries = q.queries() + extra_queries;
      return run;
    }
    if (w) cex.witnesses.push_back(std::move(*w));
  }
  run.queries = q.queries() + extra_queries;
  if (!cex.witnesses.empty()) {
    run.outcome = std::move(cex);
  } else if (!unknown.empty()) {
    run.outcome = Unknown{unknown};
  } else {
    run.outcome = Proved{absl::StrCat(
        "every send of k <= ", b.kmax, " entries (admitted or not; B any int64 with a ",
        ack_bits_of(b), "-bit ack_set absent or any) to each of the 7 dispatcher kinds debits "
        "the consumer, the aggregate and the unacked count by the finalized ΣP, serializes every "
        "P and, on overflow, keeps only the entries before the overflowing one, for every "
        "candidate value (B1 B3-B8, E4); and every "
        "candidate P is in 1..min(B, 2^31-1) with the bits at or beyond B ignored (B2, B8)")};
  }
  return run;
}

std::vector<VacuityItem> vacuity_finalization(const spec::Ruleset& rules, const Bounds& b) {
  z3::context ctx;
  Query q(ctx, limits_of(b));
  const FinalizationEncoding e = encode_finalization(ctx, rules, b);
  q.add(send_domain(e.v));
  std::vector<VacuityItem> out;
  out.push_back(vacuity_item("assumptions: the send domain is satisfiable", q.check(), true));
  const SendOutcome& shared = e.kinds.front().second;  // persistent Shared
  z3::expr rejected = q.ctx().bool_val(false);
  z3::expr admitted = q.ctx().bool_val(false);
  z3::expr partial = q.ctx().bool_val(false);
  for (unsigned i = 0; i < e.v.kmax; ++i) {
    rejected = rejected || (used(e.v, i) && !e.v.entries[i].admitted &&
                            z3::uge(shared.candidate[i], q.ctx().bv_val(1, kSumBits)));
    admitted = admitted || shared.finalized[i];
    partial = partial || (shared.finalized[i] && e.v.entries[i].ack_present);
  }
  out.push_back(vacuity_item("assumptions: a send with an admitted and a rejected entry",
                             q.check(rejected && admitted), true));
  out.push_back(vacuity_item("assumptions: a partial batch is finalized", q.check(partial), true));
  out.push_back(vacuity_item("assumptions: overflow (B8) is reachable", q.check(shared.error), true));
  out.push_back(vacuity_item(
      "false variant refuted: B4 consumer debit == pre-admission sum",
      q.check(!shared.error && shared.consumer_debit != shared.pre_admission_sum), true));
  z3::expr kept = q.ctx().bool_val(false);
  for (const z3::expr& f : shared.finalized) kept = kept || f;
  out.push_back(vacuity_item("false variant refuted: B8 an overflow finalizes nothing",
                             q.check(shared.error && kept), true));
  for (const auto& [kind, o] : e.kinds) {
    out.push_back(vacuity_item(
        absl::StrCat("false variant refuted: E4 ", std::string(spec::dispatcher_name(kind)),
                     " debits ΣP + 1"),
        q.check(!o.error && o.consumer_debit != o.finalized_sum + q.ctx().bv_val(1, kSumBits)),
        true));
  }
  return out;
}

}  // namespace permitcheck::solver::internal
