// Conservation and the budget for every parameter (E1 E2 K1-K8 C1-C7): the proof in two parts.
//
//  1. The summary (summary.h), linear integer arithmetic: for every B in 0..2^31-1, every
//     message_permits field (absent or any value 0..2^64-1), every split of the deliverable
//     indexes below B into handed off, skipped and the rest, any number of ack_set bits beyond
//     B, every failure stage and position, every path and every single-message fate, the
//     command returns exactly P and never more than P at any point (X2/X3 excepted; C4 returns
//     nothing). Unbounded: no width anywhere.
//  2. The refinement, bit level and bounded: for every command with B <= W (W-bit ack_set and
//     fates, the bit-level encoding of command_encoding.cc), its counts satisfy the summary's
//     premises and the bit-level encoding's P, protocol error, hand-offs, direct returns,
//     terminal transition and total equal the summary's, for the ruleset under check and for
//     the reference.
// The premises are facts about finite sets that hold at every width (a subset of B indexes has
// at most B members, ...); part 2 checks that the bit-level encoding, the formula the bounded
// checks and the induction below B <= 8 use, computes nothing else. A ruleset that breaks the
// summary gets its counterexamples from the integer model, laid out as a concrete command that
// the spec handles and the Monitor re-checks, as conservation.cc's.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "solver/internal/checks.h"
#include "solver/internal/summary.h"

namespace permitcheck::solver::internal {
namespace {

struct SumEncoded {
  SummaryVars s;
  SummaryOutcome ref, out;
  z3::expr x2, x3, lost, over, released;
};

SumEncoded encode(z3::context& ctx, const spec::Ruleset& rules) {
  SummaryVars s = make_summary_vars(ctx, "sum");
  SummaryOutcome ref = encode_summary(reference_rules(), s);
  SummaryOutcome out = encode_summary(rules, s);
  auto path_is = [&](spec::PayloadPath p) {
    return s.path == ctx.bv_val(static_cast<unsigned>(p), 3);
  };
  const z3::expr x2 =
      ref.path_reached && path_is(spec::PayloadPath::kCryptoDiscard) && ref.p != s.batch_size;
  const z3::expr x3 = ref.path_reached && path_is(spec::PayloadPath::kCryptoFail);
  const z3::expr bound = z3::ite(ref.protocol_error, ctx.int_val(0), ref.p);
  const z3::expr lost = !ref.protocol_error && !x2 && !x3 && out.total < ref.p;
  const z3::expr over = !x2 && (out.direct > bound || out.direct + out.settle > bound ||
                                out.total > bound || out.claimed > bound);
  // S5 (F3): a dead-letter message object of a batch expanded to the end released at skip time.
  const z3::expr released = rules.skipped_release == spec::SkippedRelease::kAll
                                ? out.batch_run && s.dead_letter
                                : ctx.bool_val(false);
  return SumEncoded{std::move(s), std::move(ref), std::move(out), x2, x3, lost, over, released};
}

std::vector<SituationClass> classes(z3::context& ctx, const SumEncoded& e) {
  const SummaryVars& s = e.s;
  return situation_classes(ctx, class_inputs(e.ref, s.stage, s.path, s.fate, s.parse_failure));
}

// Smaller is simpler, as conservation.cc: an honest wire, then B, the field, the counts.
std::vector<z3::expr> objectives(z3::context& ctx, const SumEncoded& e) {
  const SummaryVars& s = e.s;
  const z3::expr in_b = s.delivered + s.skipped + s.rest;
  const z3::expr cand = z3::ite(s.batch_size == 0, ctx.int_val(0), in_b);
  const z3::expr honest = s.field_present && s.field == cand;
  return {bit(!honest),
          s.batch_size,
          z3::ite(s.field_present, s.field, ctx.int_val(0)),
          bit(s.ack_present),
          s.delivered + s.skipped + s.rest,
          s.beyond,
          s.skipped + s.rest,
          s.rest,
          bit(s.parse_failure),
          bit(s.dead_letter),
          s.stage,
          s.path,
          s.fate};
}

// Whether the laid-out command `c` has the model's counts (the rest follows from |D|): its bit-level summary, evaluated
// with the command fixed, against the integer model. Guards the layout of every witness.
bool layout_matches(const spec::CommandSituation& c, const z3::model& m, const SummaryVars& s) {
  z3::context ctx;
  const std::int64_t bits = std::max<std::int64_t>(
      {8, c.batch_size, static_cast<std::int64_t>(c.ack_set.words().size()) * 64,
       static_cast<std::int64_t>(c.fates.size())});
  const CommandVars v = make_command_vars(ctx, static_cast<unsigned>(bits), "layout");
  const SummaryVars bv = summary_of(v);
  const std::optional<z3::model> fixed = model_with(ctx, fix_command(v, c));
  if (!fixed) return false;
  auto same = [&](const z3::expr& concrete, const z3::expr& model) {
    return static_cast<std::int64_t>(value(*fixed, concrete)) ==
           m.eval(model, true).get_numeral_int64();
  };
  auto same_bool = [&](const z3::expr& concrete, const z3::expr& model) {
    return truth(*fixed, concrete) == truth(m, model);
  };
  const bool common = same(bv.batch_size, s.batch_size) && same(bv.beyond, s.beyond) &&
                      same(bv.delivered + bv.skipped + bv.rest, s.delivered + s.skipped + s.rest) &&
                      same_bool(bv.ack_present, s.ack_present) && same_bool(bv.batched, s.batched);
  // A single message reads only |D| and index 0's fate; a batch reads every count.
  auto fate = [](std::uint64_t f) { return f == 7 ? 0 : f; };  // code 7 reads as deliver
  if (!c.batched) return common && fate(value(*fixed, bv.fate)) == fate(value(m, s.fate));
  return common && same(bv.delivered, s.delivered) && same(bv.skipped, s.skipped) &&
         same_bool(bv.parse_failure, s.parse_failure);
}

// One command per class of situation (B <= 64, from the summary under `rules`), handled by
// spec::handle_command: its returns must be the summary's. A disagreement in words, or nullopt.
std::optional<std::string> spec_disagreement(z3::context& ctx, Query& q, const SumEncoded& e,
                                             const spec::Ruleset& rules) {
  for (const SituationClass& c : classes(ctx, e)) {
    const Answer a = q.check(c.when && e.s.batch_size <= 64 && e.s.beyond <= 64);
    if (a.verdict != Verdict::kSat) continue;  // reachability is the vacuity check's
    const std::optional<spec::CommandSituation> s = situation_from_summary(q.model(), e.s);
    if (!s) return absl::StrCat(c.name, ": the summary's command cannot be laid out");
    if (!layout_matches(*s, q.model(), e.s)) {
      return absl::StrCat(c.name, ": the laid-out command ", describe_situation(*s),
                          " does not have the model's counts");
    }
    const spec::CommandRun run = spec::handle_command(rules, *s);
    const std::int64_t returned =
        run.returned_by_command + static_cast<std::int64_t>(run.handed_off.size());
    const std::int64_t total = q.model().eval(e.out.total, true).get_numeral_int64();
    if (returned != total) {
      return absl::StrCat("the summary and spec::handle_command disagree on ",
                          describe_situation(*s), ": the summary returns ", total,
                          ", the spec returns ", returned);
    }
  }
  return std::nullopt;
}

// Part 2: the bit-level encoding at width W refines the summary, for `rules`: every premise but
// the two cardinality ones holds and every output is the summary's.
z3::expr refinement_broken(const spec::Ruleset& rules, const CommandVars& v, PopcountEncoding pc) {
  const CommandOutcome o = encode_command(rules, v, pc);
  const SummaryVars s = summary_of(v, pc);
  const SummaryOutcome so = encode_summary(rules, s);
  return !(summary_domain(s, /*cardinality=*/false) && o.p == so.p &&
           o.protocol_error == so.protocol_error && o.early_failure == so.early_failure &&
           o.inconsistent == so.inconsistent && o.decompress == so.decompress &&
           o.path_reached == so.path_reached && o.single_run == so.single_run &&
           o.batch_run == so.batch_run && o.claimed == so.claimed && o.direct == so.direct &&
           o.settle == so.settle && o.total == so.total);
}

}  // namespace

// The cardinality premises (|D| <= B; |D| = B without an ack_set) are checked at this width:
// SAT needs over 20 s for them at 32 bits (pigeonhole-like counting), 3 s at 16.
inline constexpr int kCardinalityWidth = 16;

Answer refinement_check(const spec::Ruleset& rules, const Bounds& b, int* queries) {
  Answer a;
  {
    z3::context ctx;
    Query q(ctx, limits_of(b));
    const CommandVars v = make_command_vars(ctx, static_cast<unsigned>(b.bmax), "cmd");
    q.add(command_domain(v));
    z3::expr broken = refinement_broken(rules, v, popcount_of(b));
    if (&rules != &reference_rules()) {
      broken = broken || refinement_broken(reference_rules(), v, popcount_of(b));
    }
    a = q.check(broken);
    *queries += q.queries();
  }
  if (a.verdict != Verdict::kUnsat) return a;
  z3::context ctx;
  Query q(ctx, limits_of(b));
  const CommandVars v =
      make_command_vars(ctx, static_cast<unsigned>(std::min(b.bmax, kCardinalityWidth)), "cmd");
  q.add(command_domain(v));
  const SummaryVars s = summary_of(v, popcount_of(b));
  const z3::expr in_b = s.delivered + s.skipped + s.rest;
  a = q.check(!(in_b <= s.batch_size && z3::implies(!s.ack_present, in_b == s.batch_size)));
  *queries += q.queries();
  return a;
}

CheckRun run_conservation_all(const spec::Ruleset& rules, const Bounds& b) {
  CheckRun run;
  run.bounded = false;
  run.bound = absl::StrCat("all B,P (summary); bit level B<=", b.bmax, " (|D| facts B<=",
                           std::min(b.bmax, kCardinalityWidth), ")");
  z3::context ctx;
  Query q(ctx, limits_of(b), /*bit_vectors_only=*/false);
  const SumEncoded e = encode(ctx, rules);
  q.add(summary_domain(e.s));
  const Answer all = q.check(e.lost || e.over || e.released);
  if (all.verdict == Verdict::kUnknown) {
    run.queries = q.queries();
    run.outcome = Unknown{absl::StrCat("summary query: ", all.reason)};
    return run;
  }
  if (all.verdict == Verdict::kUnsat) {
    run.queries = q.queries();
    // The encoding against the spec's own code, inside prove: one command per class.
    if (std::optional<std::string> d = spec_disagreement(ctx, q, e, rules)) {
      run.queries = q.queries();
      run.outcome = Unknown{*d};
      return run;
    }
    run.queries = q.queries();
    const Answer r = refinement_check(rules, b, &run.queries);
    if (r.verdict == Verdict::kUnknown) {
      run.outcome = Unknown{absl::StrCat("refinement query (B <= ", b.bmax, "): ", r.reason)};
    } else if (r.verdict == Verdict::kSat) {
      run.outcome = Unknown{absl::StrCat("the bit-level encoding does not refine the summary at "
                                         "B <= ", b.bmax, ": an encoding defect")};
    } else {
      run.outcome = Proved{absl::StrCat(
          "summary (linear integer arithmetic, unbounded): every command with B in 0..2^31-1, "
          "message_permits absent or any 64-bit value, any split of the deliverable indexes "
          "below B into handed off, skipped and failed, any ack_set bits beyond B, every failure "
          "stage and position, path and single-message fate returns exactly P and never more "
          "than P at any point (E1 E2 K1-K8 C1-C7; X2/X3 excepted, C4 returns nothing); "
          "one command per class agrees with spec::handle_command; "
          "refinement (bit level, bounded): every bit-level command with B <= ", b.bmax,
          " returns what the summary returns for its counts and satisfies the summary's "
          "premises, the two cardinality premises (|D| <= B; |D| = B without an ack_set) at "
          "B <= ", std::min(b.bmax, kCardinalityWidth))};
    }
    return run;
  }

  // A violation: one minimal witness per class and direction, from integer models.
  Counterexample cex;
  std::string unknown;
  std::vector<SituationClass> cls = classes(ctx, e);
  cls.push_back({"dead-letter message released while held (S5)", e.released, "", "F3"});
  for (std::size_t i = 0; i < cls.size(); ++i) {
    for (const bool lost : {true, false}) {
      const bool s5 = i + 1 == cls.size();
      if (s5 && lost) continue;
      q.push();
      q.add(cls[i].when && (s5 ? e.released : (lost ? e.lost : e.over)));
      const Answer a = q.check();
      if (a.verdict == Verdict::kUnknown) unknown = absl::StrCat(cls[i].name, ": ", a.reason);
      if (a.verdict != Verdict::kSat) {
        q.pop();
        continue;
      }
      Minimized m{q.model(), true};
      if (b.minimize) m = minimize(q, objectives(ctx, e));
      q.pop();
      const std::optional<spec::CommandSituation> s = situation_from_summary(m.model, e.s);
      if (!s) {
        unknown = absl::StrCat(cls[i].name, ": the model's command is too large to write out");
        continue;
      }
      if (!layout_matches(*s, m.model, e.s)) {
        run.outcome = Unknown{absl::StrCat(cls[i].name, ": the laid-out command ",
                                           describe_situation(*s), " does not have the model's counts")};
        run.queries = q.queries();
        return run;
      }
      std::string disagreement;
      std::optional<Witness> w = command_witness(
          rules, *s, m.model.eval(e.out.total, true).get_numeral_int64(),
          m.model.eval(e.ref.p, true).get_numeral_int64(), truth(m.model, e.ref.protocol_error),
          cls[i].name, lost ? cls[i].lost_row : cls[i].over_row, lost, &disagreement);
      if (!w) {
        run.outcome = Unknown{absl::StrCat("summary: ", disagreement)};
        run.queries = q.queries();
        return run;
      }
      w->minimal = m.complete;
      if (!judge(*w)) {
        run.outcome =
            Unknown{absl::StrCat("the monitor finds no violation in the witness: ", w->words)};
        run.queries = q.queries();
        return run;
      }
      cex.witnesses.push_back(std::move(*w));
    }
  }
  run.queries = q.queries();
  if (cex.witnesses.empty()) {
    run.outcome = Unknown{unknown.empty() ? "violation found but no class reproduces it" : unknown};
  } else {
    if (!unknown.empty()) cex.note = unknown;
    run.outcome = std::move(cex);
  }
  return run;
}

std::vector<VacuityItem> vacuity_conservation_all(const spec::Ruleset& rules, const Bounds& b) {
  z3::context ctx;
  Query q(ctx, limits_of(b), /*bit_vectors_only=*/false);
  const SumEncoded e = encode(ctx, rules);
  q.add(summary_domain(e.s));
  std::vector<VacuityItem> out;
  out.push_back(vacuity_item("assumptions: summary, the domain is satisfiable", q.check(), true));
  for (const SituationClass& c : classes(ctx, e)) {
    out.push_back(vacuity_item(absl::StrCat("assumptions: summary, ", c.name, " is reachable"),
                               q.check(c.when), true));
  }
  const z3::expr big = e.s.batch_size == ctx.int_val(spec::kMaxPermits);
  out.push_back(vacuity_item("assumptions: summary, a batch of B = 2^31-1 fully handed off",
                             q.check(big && e.ref.batch_run && e.out.claimed == e.s.batch_size),
                             true));
  const z3::expr in_scope = !e.ref.protocol_error && !e.x2 && !e.x3;
  out.push_back(vacuity_item("false variant refuted: summary, E1 total == P + 1",
                             q.check(in_scope && e.out.total != e.ref.p + 1), true));
  out.push_back(vacuity_item("false variant refuted: summary, E2 total <= P - 1",
                             q.check(in_scope && e.out.total + 1 > e.ref.p), true));
  out.push_back(vacuity_item("false variant refuted: summary, K8 claimed < P",
                             q.check(in_scope && e.out.claimed >= e.ref.p), true));
  out.push_back(vacuity_item("false variant refuted: summary, E2 without the X2 exception",
                             q.check(!e.ref.protocol_error && e.out.total > e.ref.p), true));
  // The refinement is not vacuous either: a summary that forgot the beyond-B bits (X6) differs.
  {
    z3::context bctx;
    Query bq(bctx, limits_of(b));
    const CommandVars v = make_command_vars(bctx, static_cast<unsigned>(b.bmax), "cmd");
    bq.add(command_domain(v));
    SummaryVars s = summary_of(v, popcount_of(b));
    s.beyond = bctx.bv_val(0, kCountBits);
    const CommandOutcome o = encode_command(rules, v, popcount_of(b));
    const SummaryOutcome so = encode_summary(rules, s);
    out.push_back(vacuity_item(
        absl::StrCat("false variant refuted: refinement, a summary without the bits beyond B "
                     "(X6) at B <= ", b.bmax),
        bq.check(o.p != so.p), true));
  }
  return out;
}

}  // namespace permitcheck::solver::internal
