// Finalization for sends of any number of entries (B1-B8, E4), by induction over the entries
// of a send: the state after entry i is the running sums (finalized ΣP, pre-admission sum,
// consumer debit, aggregate debit, unacked increase, serialized message_permits) and the
// largest finalized P so far. Z3 checks, for each of the seven dispatcher kinds, as integers:
//   initiation   the empty send satisfies the invariant;
//   consecution  an invariant state followed by any entry (B any int64, admitted or not, its
//                candidate any value B2 allows: 0 for B <= 0, B without an ack_set, else any
//                count 0..B of the ack_set bits below B) satisfies it again;
//   implication  the invariant gives the properties of a send that ends there: every debit and
//                the serialized sum equal the finalized ΣP, which stays within 2^31-1 (an
//                entry that would overflow a checked sum stops the send; the entries before it
//                stay, B8), and every finalized P is in 1..min(B, 2^31-1).
// The candidate is abstracted by its range, which holds for every ack_set; that the bit-level
// candidate is exactly the popcount below B is the bounded check's B2 proof (finalization.cc).
// When the invariant fails (legacy, rev-b's sticky-key aggregates), the counterexamples come
// from the bounded search of finalization.cc, whose witnesses the Monitor re-checks.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "solver/internal/checks.h"
#include "spec/finalize.h"

namespace permitcheck::solver::internal {
namespace {

struct SendState {
  z3::expr fin, pre, consumer, aggregate, unacked, serialized, largest;
  z3::expr range;    // every finalized P so far is in 1..B of its entry
  z3::expr stopped;  // B8: an entry overflowed a checked sum; nothing after it counts
};

struct Entry {
  z3::expr b, ack_present, admitted, cand;
};

class SendSystem {
 public:
  SendSystem(z3::context& ctx, const spec::Ruleset& rules, spec::DispatcherKind kind)
      : ctx_(ctx), rules_(rules), kind_(kind) {}

  SendState fresh(const std::string& n) {
    auto v = [&](const char* p) { return ctx_.int_const((n + "." + p).c_str()); };
    return SendState{v("fin"), v("pre"), v("consumer"), v("aggregate"), v("unacked"),
                     v("serialized"), v("largest"), ctx_.bool_const((n + ".range").c_str()),
                     ctx_.bool_const((n + ".stopped").c_str())};
  }
  Entry entry(const std::string& n) {
    return Entry{ctx_.int_const((n + ".B").c_str()), ctx_.bool_const((n + ".ack").c_str()),
                 ctx_.bool_const((n + ".admitted").c_str()),
                 ctx_.int_const((n + ".candidate").c_str())};
  }
  // B2 for every ack_set: what the candidate can be.
  z3::expr entry_domain(const Entry& e) const {
    return e.b >= ctx_.int_val(INT64_MIN) && e.b <= ctx_.int_val(INT64_MAX) &&
           z3::implies(e.b <= 0, e.cand == 0) &&
           z3::implies(e.b > 0 && !e.ack_present, e.cand == e.b) &&
           z3::implies(e.b > 0 && e.ack_present, e.cand >= 0 && e.cand <= e.b);
  }
  z3::expr init(const SendState& s) const {
    return s.fin == 0 && s.pre == 0 && s.consumer == 0 && s.aggregate == 0 && s.unacked == 0 &&
           s.serialized == 0 && s.largest == 0 && s.range && !s.stopped;
  }
  SendState next(const SendState& s, const Entry& e) const {
    const z3::expr zero = ctx_.int_val(0);
    const z3::expr max = ctx_.int_val(spec::kMaxPermits);
    const z3::expr finalizes = e.admitted && e.cand >= 1;  // B1, B3
    // B8: the entry that would take a checked sum past 2^31-1 stops the send there.
    z3::expr over = finalizes && s.fin + e.cand > max;
    if (needs_pre()) over = over || s.pre + e.cand > max;
    over = !s.stopped && over;
    const z3::expr take = !s.stopped && !over;
    const z3::expr fin = take && finalizes;
    const z3::expr p = z3::ite(fin, e.cand, zero);
    const z3::expr c = z3::ite(take, e.cand, zero);
    const bool consumer_finalized = rules_.consumer_debit == spec::DebitSource::kFinalized;
    return SendState{
        s.fin + p,
        s.pre + c,
        s.consumer + (consumer_finalized ? p : c),
        spec::has_aggregate(kind_) ? s.aggregate + (aggregate_finalized() ? p : c) : zero,
        spec::acks_individually(kind_) ? s.unacked + p : zero,
        rules_.broker_sends_message_permits ? s.serialized + p : zero,
        z3::ite(fin && e.cand > s.largest, e.cand, s.largest),
        s.range && z3::implies(fin, e.cand >= 1 && e.cand <= e.b),
        s.stopped || over,
    };
  }
  z3::expr invariant(const SendState& s) const {
    const z3::expr zero = ctx_.int_val(0);
    return s.consumer == s.fin &&
           s.aggregate == (spec::has_aggregate(kind_) ? s.fin : zero) &&
           s.unacked == (spec::acks_individually(kind_) ? s.fin : zero) &&
           s.serialized == (rules_.broker_sends_message_permits ? s.fin : zero) && s.range &&
           s.fin >= 0 && s.fin <= s.pre && s.largest >= 0 && s.largest <= s.fin &&
           s.fin <= ctx_.int_val(spec::kMaxPermits);
  }
  // What finalize_permits makes of a send that ends in state s, and whether it is right: every
  // debit is the finalized ΣP of the entries before any overflow, within 2^31-1 (B8).
  z3::expr safety(const SendState& s) const {
    const z3::expr max = ctx_.int_val(spec::kMaxPermits);
    z3::expr ok = s.consumer == s.fin;                                                // B4
    if (spec::has_aggregate(kind_)) ok = ok && s.aggregate == s.fin;                  // B6
    if (spec::acks_individually(kind_)) ok = ok && s.unacked == s.fin;                // B5
    if (rules_.broker_sends_message_permits) ok = ok && s.serialized == s.fin;        // B7
    return ok && s.fin <= max && s.range && s.largest <= max;  // B2, B8
  }

 private:
  bool needs_pre() const {
    const bool consumer_finalized = rules_.consumer_debit == spec::DebitSource::kFinalized;
    return !consumer_finalized || (spec::has_aggregate(kind_) && !aggregate_finalized());
  }
  bool aggregate_finalized() const {
    switch (rules_.finalized_dispatchers) {
      case spec::DispatcherCoverage::kAllSix:
        return true;
      case spec::DispatcherCoverage::kPersistentSharedOnly:
        return !spec::is_sticky_key(kind_);
      case spec::DispatcherCoverage::kNone:
        return false;
    }
    return true;
  }

  z3::context& ctx_;
  const spec::Ruleset& rules_;
  spec::DispatcherKind kind_;
};

}  // namespace

CheckRun run_finalization_all(const spec::Ruleset& rules, const Bounds& b) {
  CheckRun run;
  run.bounded = false;
  run.bound = "any number of entries, any B, 7 dispatchers (induction over entries)";
  std::string failed;
  for (spec::DispatcherKind kind : spec::all_dispatcher_kinds()) {
    z3::context ctx;
    Query q(ctx, limits_of(b), /*bit_vectors_only=*/false);
    SendSystem sys(ctx, rules, kind);
    const SendState s = sys.fresh("s");
    const Entry e = sys.entry("e");
    const SendState n = sys.next(s, e);
    const std::string name(spec::dispatcher_name(kind));
    const Answer checks[] = {
        q.check(sys.init(s) && !sys.invariant(s)),
        q.check(sys.invariant(s) && sys.entry_domain(e) && !sys.invariant(n)),
        q.check(sys.invariant(s) && !sys.safety(s)),
    };
    run.queries += q.queries();
    static constexpr const char* kParts[] = {"initiation", "consecution", "implication"};
    for (int i = 0; i < 3; ++i) {
      if (checks[i].verdict == Verdict::kUnknown) {
        run.outcome = Unknown{absl::StrCat(name, " ", kParts[i], ": ", checks[i].reason)};
        return run;
      }
      if (checks[i].verdict == Verdict::kSat && failed.empty()) {
        failed = absl::StrCat(name, ": ", kParts[i], " fails");
      }
    }
  }
  if (failed.empty()) {
    run.outcome = Proved{
        "induction over the entries of a send (initiation, consecution, implication, as "
        "integers): for sends of any number of entries, each with any B (int64), admitted or "
        "not, and any candidate B2 allows, to each of the 7 dispatcher kinds, the consumer "
        "debit, the aggregate debit, the unacked increase and the serialized message_permits "
        "all equal the finalized ΣP, an overflow stops the send with the entries before it kept, "
        "and every finalized P is in "
        "1..min(B, 2^31-1) (B1-B8 E4)"};
    return run;
  }
  // The invariant fails: the bounded search gives the concrete sends.
  CheckRun bounded = run_finalization(rules, b);
  run.queries += bounded.queries;
  if (auto* cex = std::get_if<Counterexample>(&bounded.outcome)) {
    cex->note = absl::StrCat(failed, "; witnesses from the bounded search (", bounded.bound, ")",
                             cex->note.empty() ? "" : "; ", cex->note);
    run.outcome = std::move(*cex);
  } else {
    run.outcome = Unknown{absl::StrCat(failed, ", and the bounded search (", bounded.bound,
                                       ") finds no send that breaks it")};
  }
  return run;
}

std::vector<VacuityItem> vacuity_finalization_all(const spec::Ruleset& rules, const Bounds& b) {
  std::vector<VacuityItem> out;
  z3::context ctx;
  Query q(ctx, limits_of(b), /*bit_vectors_only=*/false);
  SendSystem sys(ctx, rules, spec::DispatcherKind::kPersistentKeyShared);
  const SendState s = sys.fresh("s");
  const Entry e = sys.entry("e");
  const SendState n = sys.next(s, e);
  const z3::expr step = sys.invariant(s) && sys.entry_domain(e);
  out.push_back(vacuity_item("assumptions: initiation, the empty send", q.check(sys.init(s)), true));
  out.push_back(vacuity_item("assumptions: consecution with a rejected entry of candidate >= 1",
                             q.check(step && !e.admitted && e.cand >= 1), true));
  out.push_back(vacuity_item("assumptions: consecution with a finalized entry of B = 2^31-1",
                             q.check(step && e.admitted && e.cand == ctx.int_val(spec::kMaxPermits)), true));
  out.push_back(vacuity_item("assumptions: consecution through an overflow (B8) keeping a P",
                             q.check(step && n.stopped && !s.stopped && s.fin > 0), true));
  out.push_back(vacuity_item(
      "false variant refuted: the consumer debit equals the pre-admission sum",
      q.check(step && n.pre != n.fin), true));
  out.push_back(vacuity_item("false variant refuted: every candidate is finalized (B3)",
                             q.check(step && e.cand == 0 && e.b > 0), true));
  return out;
}

}  // namespace permitcheck::solver::internal
