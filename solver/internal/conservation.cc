// Check 1, per-command conservation (E1, E2, K5-K8): for every command with B <= bmax, every
// message_permits field (absent or any 64-bit value), ack_set, failure stage and index, skip set
// and direct-return path, the command returns exactly P in total and never more than P at any
// point. P is what the rulebook's ladder resolves (C1-C3, read as rev-d reads it), so a ruleset
// whose client resolves or settles differently fails against it.
//
// Known deviations are outside the property, as the rulebook accepts them: crypto DISCARD of a
// partial batch returns B (X2) and crypto FAIL holds P until the incarnation ends (X3). A
// protocol error (C4) must return nothing.
//
// Message-object lifetime (S5) rides along: under a ruleset that releases every skipped
// message object (revision B, F3), a batch whose dead-letter index is skipped releases an
// object dead-letter handling still holds.
#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "solver/internal/checks.h"
#include "solver/internal/command_encoding.h"
#include "spec/client_command.h"
#include "spec/monitor.h"
#include "spec/permit_state.h"

namespace permitcheck::solver::internal {
namespace {

struct Encoded {
  CommandVars v;
  CommandOutcome ref;  // the reference ruleset: what P is
  CommandOutcome out;  // the ruleset under check
  z3::expr x2;         // crypto DISCARD of a partial batch (known deviation)
  z3::expr x3;         // crypto FAIL (known deviation)
  z3::expr lost;       // E1/K5: returns less than P
  z3::expr over;       // E2/K7/K8: more than P at some point
  z3::expr released;   // S5: a dead-letter message object released while held (F3)
};

Encoded encode(z3::context& ctx, const spec::Ruleset& rules, const Bounds& b) {
  const PopcountEncoding pc = popcount_of(b);
  CommandVars v = make_command_vars(ctx, static_cast<unsigned>(b.bmax), "cmd");
  CommandOutcome ref = encode_command(reference_rules(), v, pc);
  CommandOutcome out = encode_command(rules, v, pc);
  const z3::expr b_count = resize(v.batch_size, kCountBits);
  auto path_is = [&](spec::PayloadPath p) {
    return v.path == ctx.bv_val(static_cast<unsigned>(p), 3);
  };
  z3::expr x2 = ref.path_reached && path_is(spec::PayloadPath::kCryptoDiscard) && ref.p != b_count;
  z3::expr x3 = ref.path_reached && path_is(spec::PayloadPath::kCryptoFail);
  const z3::expr zero = ctx.bv_val(0, kCountBits);
  // C4: a protocol error returns nothing; otherwise P bounds every prefix of the returns.
  const z3::expr bound = z3::ite(ref.protocol_error, zero, ref.p);
  z3::expr lost = !ref.protocol_error && !x2 && !x3 && z3::ult(out.total, ref.p);
  z3::expr over = !x2 && (z3::ugt(out.direct, bound) || z3::ugt(out.direct + out.settle, bound) ||
                          z3::ugt(out.total, bound) || z3::ugt(out.claimed, bound));
  z3::expr released = ctx.bool_val(false);
  if (rules.skipped_release == spec::SkippedRelease::kAll) {
    // A deliverable index below B whose fate is dead letter (code 4: bits 100), in a batch
    // expanded to the end (S5; the single-message case is F1's as well, so it is left out).
    const z3::expr b_mask = low_mask(resize(v.batch_size, v.width));
    const z3::expr all = ~ctx.bv_val(0, v.width);
    const z3::expr deliverable = z3::ite(v.ack_present, v.ack, all) & b_mask;
    const z3::expr dead_letter = v.fate2 & ~v.fate1 & ~v.fate0 & deliverable;
    released = out.batch_run && !out.parse_failure && dead_letter != ctx.bv_val(0, v.width);
  }
  return Encoded{std::move(v), std::move(ref), std::move(out), x2, x3, lost, over, released};
}

std::vector<SituationClass> classes(z3::context& ctx, const Encoded& e) {
  const CommandVars& v = e.v;
  const z3::expr f0 =
      z3::concat(v.fate2.extract(0, 0), z3::concat(v.fate1.extract(0, 0), v.fate0.extract(0, 0)));
  return situation_classes(ctx, class_inputs(e.ref, v.stage, v.path, f0, e.ref.parse_failure));
}

// Smaller is simpler: an honest wire first (the field carries the broker's P), then B, the
// field, the ack_set, and as few unusual fates as possible.
std::vector<z3::expr> objectives(z3::context& ctx, const Encoded& e, PopcountEncoding pc) {
  const CommandVars& v = e.v;
  const z3::expr honest = v.field_present && v.field == resize(candidate(v, pc), 64);
  const z3::expr b_mask = low_mask(resize(v.batch_size, v.width));
  const z3::expr unusual = (v.fate0 | v.fate1 | v.fate2) & b_mask;
  std::vector<z3::expr> out = {
      bit(!honest),
      v.batch_size,
      z3::ite(v.field_present, v.field, ctx.bv_val(0, 64)),
      bit(v.ack_present),
      z3::ite(v.ack_present, popcount(v.ack, 16, pc), ctx.bv_val(0, 16)),
      popcount(unusual, 16, pc),
      resize(v.ack, std::min(64u, v.width)),
      v.stage,
      v.path,
  };
  return out;
}

// The witness of a model: the situation handled by the spec under `rules`, checked against
// rev-d. Fails (nullopt) when the spec disagrees with the encoding about what was returned.
std::optional<Witness> witness(const spec::Ruleset& rules, const z3::model& m, const Encoded& e,
                               const SituationClass& cls, bool lost, std::string* disagreement) {
  return command_witness(rules, situation_from(m, e.v),
                         static_cast<std::int64_t>(value(m, e.out.total)),
                         static_cast<std::int64_t>(value(m, e.ref.p)), truth(m, e.ref.protocol_error),
                         cls.name, lost ? cls.lost_row : cls.over_row, lost, disagreement);
}

}  // namespace

std::vector<SituationClass> situation_classes(z3::context& ctx, const ClassInputs& in) {
  auto stage_is = [&](unsigned s) { return in.stage == ctx.bv_val(s, 2); };
  auto path_is = [&](spec::PayloadPath p) {
    return in.path_reached && in.path == ctx.bv_val(static_cast<unsigned>(p), 3);
  };
  auto single = [&](spec::IndexFate fate) {
    return in.single_run && in.fate0 == ctx.bv_val(static_cast<unsigned>(fate), 3);
  };
  // Deliver is code 0; 6 and 7 read as deliver too (command_encoding.h).
  const z3::expr single_delivered = in.single_run && (in.fate0 == ctx.bv_val(0, 3) ||
                                                      in.fate0 == ctx.bv_val(6, 3) ||
                                                      in.fate0 == ctx.bv_val(7, 3));
  const z3::expr not_pe = !in.protocol_error;
  return {
      {"protocol error (C4)", in.protocol_error, "", ""},
      {"checksum failure", not_pe && stage_is(kStageChecksum), "L1", ""},
      {"metadata failure", not_pe && stage_is(kStageMetadata), "L2", ""},
      {"inconsistent command (C5)", in.inconsistent, "", ""},
      {"decompression failure", in.decompress, "L3", ""},
      {"non-final chunk", path_is(spec::PayloadPath::kChunkNonFinal), "", ""},
      {"crypto DISCARD", path_is(spec::PayloadPath::kCryptoDiscard), "", ""},
      {"crypto FAIL", path_is(spec::PayloadPath::kCryptoFail), "", ""},
      {"single message delivered", single_delivered, "", ""},
      {"single message duplicate", single(spec::IndexFate::kDuplicate), "", ""},
      {"single message compacted", single(spec::IndexFate::kCompacted), "", ""},
      {"single message before startMessageId", single(spec::IndexFate::kBeforeStart), "L9", ""},
      {"single message past dead-letter threshold", single(spec::IndexFate::kDeadLetter), "", ""},
      {"single message hand-off fails", single(spec::IndexFate::kHandoffFails), "", ""},
      {"batch parse failure", in.batch_run && in.parse_failure, "L4", "L5"},
      {"batch expanded", in.batch_run && !in.parse_failure, "", ""},
  };
}

std::optional<Witness> command_witness(const spec::Ruleset& rules, const spec::CommandSituation& s,
                                       std::int64_t model_total, std::int64_t p, bool pe,
                                       const std::string& situation, const std::string& row,
                                       bool lost, std::string* disagreement) {
  const spec::CommandRun run = spec::handle_command(rules, s);
  const std::int64_t returned =
      run.returned_by_command + static_cast<std::int64_t>(run.handed_off.size());
  if (returned != model_total) {
    *disagreement = absl::StrCat("encoding and spec disagree on ", describe_situation(s),
                                 ": encoding returns ", model_total, ", spec returns ", returned);
    return std::nullopt;
  }
  const std::int64_t q = std::max<std::int64_t>(1000, 2 * p);
  Witness w;
  w.id = row;
  // Review findings (rulebook 11): the revision's decision behind the failing class.
  if (w.id.empty() && !lost && rules.direct_returns == spec::DirectReturns::kBesideBudget &&
      run.returned_by_command > p &&
      returned > p) {
    w.id = "F1";  // a direct return beside a budget that drains as well
  }
  if (w.id.empty() && lost && run.closes_connection &&
      rules.inconsistent == spec::InconsistentHandling::kCloseConnection) {
    w.id = "F4";  // an inconsistent command closes the pooled connection
  }
  w.situation = situation;
  w.header = spec::TraceHeader{.source = spec::TraceSource::kClient,
                               .ruleset = spec::RulesetId::kRevD,
                               .q = q,
                               .t = spec::default_threshold(q)};
  const spec::Id inc = spec::Id::number(1);
  w.events.push_back(spec::IncOpen{.inc = inc, .cnx = spec::Id::text("c1"), .consumer = 0});
  w.events.push_back(spec::IncFlowEnabled{.inc = inc});
  w.events.push_back(spec::Flow{.cnx = spec::Id::text("c1"), .consumer = 0, .permits = q, .inc = inc});
  if (w.id == "F4") {
    // An unrelated consumer on the same pooled connection: its incarnation ends with it.
    const spec::Id other = spec::Id::number(2);
    w.events.push_back(spec::IncOpen{.inc = other, .cnx = spec::Id::text("c1"), .consumer = 1});
    w.events.push_back(spec::IncFlowEnabled{.inc = other});
    w.events.push_back(
        spec::Flow{.cnx = spec::Id::text("c1"), .consumer = 1, .permits = q, .inc = other});
  }
  w.events.insert(w.events.end(), run.events.begin(), run.events.end());
  const std::vector<spec::Event> returns = spec::returns_of(run);
  w.events.insert(w.events.end(), returns.begin(), returns.end());
  const std::int64_t bound = pe ? 0 : p;
  if (row == "F3") {
    w.words = absl::StrCat(describe_situation(s), ", returned ", returned, ", P=", p,
                           ": the dead-letter message object is released at skip time while "
                           "dead-letter handling still holds it (use after release)");
    return w;
  }
  w.words = absl::StrCat(describe_situation(s), ", returned ", returned, ", P=", p,
                         pe ? " (protocol error: must return nothing)" : "",
                         returned < bound ? absl::StrCat(" (", bound - returned, " lost)")
                                          : (returned > bound ? absl::StrCat(" (", returned - bound,
                                                                             " over-granted)")
                                                              : std::string(" (a prefix exceeds P)")));
  return w;
}

inline constexpr std::chrono::milliseconds kRestTimeout{10000};

namespace {

// The witnesses of a conservation violation: one minimal witness per class of situation and
// direction, and the S5 release, each confirmed by the monitor (`judge`). A search step returns
// false when the whole search must stop; `stopped` then says why.
class WitnessSearch {
 public:
  WitnessSearch(const spec::Ruleset& rules, const Bounds& b) : rules_(rules), b_(b) {}

  // Class i of `e` in one direction (lost or over); `*found` set when it has a witness.
  bool search_class(Query& q, const Encoded& e, z3::context& ctx, std::size_t i, bool lost,
                    bool* found) {
    const SituationClass cls = classes(ctx, e)[i];
    q.push();
    q.add(cls.when && (lost ? e.lost : e.over));
    const Answer a = q.check();
    if (a.verdict == Verdict::kUnknown) unknown_ = absl::StrCat(cls.name, ": ", a.reason);
    if (a.verdict != Verdict::kSat) {
      q.pop();
      return true;
    }
    Minimized m{q.model(), true};
    if (b_.minimize) m = minimize(q, objectives(ctx, e, popcount_of(b_)));
    q.pop();
    if (!keep(m, e, cls, lost)) return false;
    *found = true;
    return true;
  }

  // S5 (F3): the message object's lifetime, beside the permit counts.
  bool search_release(Query& q, const Encoded& e, z3::context& ctx) {
    q.push();
    q.add(e.released);
    const Answer a = q.check();
    bool go_on = true;
    if (a.verdict == Verdict::kSat) {
      Minimized m{q.model(), true};
      if (b_.minimize) m = minimize(q, objectives(ctx, e, popcount_of(b_)));
      const SituationClass cls{"dead-letter message released while held (S5)", e.released, "", "F3"};
      go_on = keep(m, e, cls, /*lost=*/false);
    } else if (a.verdict == Verdict::kUnknown) {
      unknown_ = absl::StrCat("dead-letter release: ", a.reason);
    }
    q.pop();
    return go_on;
  }

  Counterexample& counterexample() { return cex_; }
  std::optional<Outcome>& stopped() { return stopped_; }
  // The search's outcome once it went to its end.
  Outcome outcome() && {
    if (cex_.witnesses.empty()) {
      return Unknown{unknown_.empty() ? "violation found but no class reproduces it" : unknown_};
    }
    return std::move(cex_);
  }

 private:
  // The witness of `m` kept when the encoding and the specification agree on it and the
  // monitor confirms it (never report a counterexample the oracle does not confirm).
  bool keep(const Minimized& m, const Encoded& e, const SituationClass& cls, bool lost) {
    std::string disagreement;
    std::optional<Witness> w = witness(rules_, m.model, e, cls, lost, &disagreement);
    if (!w) {
      stopped_ = Unknown{disagreement};
      return false;
    }
    w->minimal = m.complete;
    if (!judge(*w)) {
      stopped_ = Unknown{absl::StrCat("the monitor finds no violation in the witness: ", w->words)};
      return false;
    }
    cex_.witnesses.push_back(std::move(*w));
    return true;
  }

  const spec::Ruleset& rules_;
  const Bounds& b_;
  Counterexample cex_;
  std::string unknown_;
  std::optional<Outcome> stopped_;
};

// Found per class: [i][0] lost, [i][1] over.
using FoundClasses = std::vector<std::array<bool, 2>>;

// After the search at B <= kSmallWidth: any violation at the full width in a class the small
// width did not show, searched there. Only completes the list of classes: bounded by
// kRestTimeout, and an unknown here is a note in the counterexample, not a result.
bool search_full_width_rest(WitnessSearch& search, Query& q, const Encoded& e, z3::context& ctx,
                            const Bounds& b, FoundClasses& found, int& queries) {
  const std::vector<SituationClass> full = classes(ctx, e);
  z3::expr rest = ctx.bool_val(false);
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (!found[i][0]) rest = rest || (full[i].when && e.lost);
    if (!found[i][1]) rest = rest || (full[i].when && e.over);
  }
  Limits short_limits = limits_of(b);
  short_limits.timeout = std::min(short_limits.timeout, kRestTimeout);
  Query rest_q(ctx, short_limits);
  rest_q.add(command_domain(e.v));
  const Answer a = rest_q.check(rest);
  queries += rest_q.queries();
  if (a.verdict == Verdict::kUnknown) {
    search.counterexample().note = absl::StrCat("classes without a witness at B <= ", kSmallWidth,
                                                " were not excluded at B <= ", b.bmax, " (",
                                                a.reason, ")");
  }
  if (a.verdict != Verdict::kSat) return true;
  for (std::size_t i = 0; i < found.size(); ++i) {
    for (const bool lost : {true, false}) {
      bool& f = found[i][lost ? 0 : 1];
      if (!f && !search.search_class(q, e, ctx, i, lost, &f)) return false;
    }
  }
  return true;
}

}  // namespace

CheckRun run_conservation(const spec::Ruleset& rules, const Bounds& b) {
  CheckRun run;
  run.bound = absl::StrCat("B<=", b.bmax);
  z3::context ctx;
  Query q(ctx, limits_of(b));
  const Encoded e = encode(ctx, rules, b);
  q.add(command_domain(e.v));

  // A violation with B <= 8 is one for every larger bmax: look there first (fast), and prove at
  // the full width only when there is none.
  std::optional<z3::context> small_ctx;
  std::optional<Query> small_q;
  std::optional<Encoded> small_e;
  bool small_violation = false;
  if (b.bmax > kSmallWidth) {
    Bounds small = b;
    small.bmax = kSmallWidth;
    small_ctx.emplace();
    small_q.emplace(*small_ctx, limits_of(b));
    small_e.emplace(encode(*small_ctx, rules, small));
    small_q->add(command_domain(small_e->v));
    small_violation = small_q->check(small_e->lost || small_e->over || small_e->released).verdict ==
                      Verdict::kSat;
    if (!small_violation) {
      small_q.reset();
      small_e.reset();
      small_ctx.reset();
    }
  }
  if (!small_violation) {
    const Answer all = q.check(e.lost || e.over || e.released);
    if (all.verdict != Verdict::kSat) run.queries = q.queries();
    if (all.verdict == Verdict::kUnsat) {
      run.outcome = Proved{absl::StrCat(
          "every command with B <= ", b.bmax, " (", b.bmax,
          "-bit ack_set, message_permits absent or any value, every failure stage and index, "
          "skip set and direct-return path) returns exactly P and never more than P (E1 E2 K5 "
          "K6 K7 K8; X2/X3 excepted, C4 returns nothing)")};
      return run;
    }
    if (all.verdict == Verdict::kUnknown) {
      run.outcome = Unknown{absl::StrCat("conservation query: ", all.reason)};
      return run;
    }
  }

  // A violation exists: searched first at the small width when it showed there.
  WitnessSearch search(rules, b);
  FoundClasses found(classes(ctx, e).size(), {false, false});
  Query& first_q = small_q ? *small_q : q;
  const Encoded& first_e = small_e ? *small_e : e;
  z3::context& first_ctx = small_ctx ? *small_ctx : ctx;
  bool ok = true;
  for (std::size_t i = 0; i < found.size() && ok; ++i) {
    for (const bool lost : {true, false}) {
      if (ok) ok = search.search_class(first_q, first_e, first_ctx, i, lost, &found[i][lost ? 0 : 1]);
    }
  }
  if (ok && small_q) ok = search_full_width_rest(search, q, e, ctx, b, found, run.queries);
  if (ok) ok = search.search_release(first_q, first_e, first_ctx);
  run.queries += q.queries() + (small_q ? small_q->queries() : 0);
  run.outcome = ok ? std::move(search).outcome() : *std::move(search.stopped());
  return run;
}

std::vector<VacuityItem> vacuity_conservation(const spec::Ruleset& rules, const Bounds& b) {
  z3::context ctx;
  Query q(ctx, limits_of(b));
  const Encoded e = encode(ctx, rules, b);
  q.add(command_domain(e.v));
  std::vector<VacuityItem> out;
  out.push_back(vacuity_item("assumptions: the command domain is satisfiable", q.check(), true));
  for (const SituationClass& cls : classes(ctx, e)) {
    out.push_back(vacuity_item(absl::StrCat("assumptions: ", cls.name, " is reachable"),
                               q.check(cls.when), true));
  }
  const z3::expr one = ctx.bv_val(1, kCountBits);
  const z3::expr in_scope = !e.ref.protocol_error && !e.x2 && !e.x3;
  // Each false variant must be refuted (its negation satisfiable).
  out.push_back(vacuity_item("false variant refuted: E1 total == P + 1",
                             q.check(in_scope && e.out.total != e.ref.p + one), true));
  out.push_back(vacuity_item("false variant refuted: E2 total <= P - 1",
                             q.check(in_scope && z3::ugt(e.out.total + one, e.ref.p)), true));
  out.push_back(vacuity_item("false variant refuted: K8 claimed < P",
                             q.check(in_scope && z3::uge(e.out.claimed, e.ref.p)), true));
  out.push_back(vacuity_item(
      "false variant refuted: E2 without the X2 exception (crypto DISCARD of a partial batch)",
      q.check(!e.ref.protocol_error && z3::ugt(e.out.total, e.ref.p)), true));
  out.push_back(vacuity_item("false variant refuted: C4 protocol error returns 1",
                             q.check(e.ref.protocol_error && e.out.total != one), true));
  return out;
}

}  // namespace permitcheck::solver::internal
