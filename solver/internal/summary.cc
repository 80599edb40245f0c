#include "solver/internal/summary.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "spec/finalize.h"

namespace permitcheck::solver::internal {
namespace {

using spec::FailureStage;

// Constants and helpers of the summary's number sort (Int, or kCountBits-wide vectors compared
// signed: every count of a command fits far inside 39 bits).
class Num {
 public:
  Num(z3::context& ctx, bool integers) : ctx_(ctx), integers_(integers) {}
  z3::expr operator()(std::int64_t n) const {
    return integers_ ? ctx_.int_val(n) : ctx_.bv_val(n, kCountBits);
  }
  z3::expr of(const z3::expr& b) const { return z3::ite(b, (*this)(1), (*this)(0)); }
  z3::expr clamp_zero(const z3::expr& x) const { return z3::ite(x >= (*this)(0), x, (*this)(0)); }

 private:
  z3::context& ctx_;
  bool integers_;
};

std::uint64_t uvalue(const z3::model& m, const z3::expr& e) {
  return m.eval(e, true).get_numeral_uint64();
}

}  // namespace

SummaryVars make_summary_vars(z3::context& ctx, const std::string& prefix) {
  auto name = [&](const char* n) { return prefix + "." + n; };
  const z3::expr field = ctx.int_const(name("field").c_str());
  return SummaryVars{
      .integers = true,
      .batch_size = ctx.int_const(name("B").c_str()),
      .batched = ctx.bool_const(name("batched").c_str()),
      .field_present = ctx.bool_const(name("field_present").c_str()),
      .field_in_range = field >= 1 && field <= ctx.int_val(spec::kMaxPermits),
      .field_value = field,
      .field = field,
      .ack_present = ctx.bool_const(name("ack_present").c_str()),
      .delivered = ctx.int_const(name("delivered").c_str()),
      .skipped = ctx.int_const(name("skipped").c_str()),
      .rest = ctx.int_const(name("rest").c_str()),
      .beyond = ctx.int_const(name("beyond").c_str()),
      .parse_failure = ctx.bool_const(name("parse_failure").c_str()),
      .dead_letter = ctx.bool_const(name("dead_letter").c_str()),
      .stage = ctx.bv_const(name("stage").c_str(), 2),
      .path = ctx.bv_const(name("path").c_str(), 3),
      .fate = ctx.bv_const(name("fate").c_str(), 3),
  };
}

SummaryVars summary_of(const CommandVars& v, PopcountEncoding pc) {
  z3::context& ctx = v.batch_size.ctx();
  const unsigned w = v.width;
  const CommandCounts n = command_counts(v, pc);
  const z3::expr b_mask = low_mask(resize(v.batch_size, w));
  const z3::expr d = z3::ite(v.ack_present, v.ack, ~ctx.bv_val(0, w)) & b_mask;
  const z3::expr dead = v.fate2 & ~v.fate1 & ~v.fate0 & d;  // IndexFate code 4
  return SummaryVars{
      .integers = false,
      .batch_size = resize(v.batch_size, kCountBits),
      .batched = v.batched,
      .field_present = v.field_present,
      .field_in_range =
          z3::uge(v.field, ctx.bv_val(1, 64)) &&
          z3::ule(v.field, ctx.bv_val(static_cast<std::uint64_t>(spec::kMaxPermits), 64)),
      .field_value = resize(v.field, kCountBits),
      .field = v.field,
      .ack_present = v.ack_present,
      .delivered = n.delivered,
      .skipped = n.skipped,
      .rest = n.rest,
      .beyond = n.beyond,
      .parse_failure = n.parse_failure,
      .dead_letter = !n.parse_failure && dead != ctx.bv_val(0, w),
      .stage = v.stage,
      .path = v.path,
      .fate = z3::concat(v.fate2.extract(0, 0),
                         z3::concat(v.fate1.extract(0, 0), v.fate0.extract(0, 0))),
  };
}

z3::expr summary_domain(const SummaryVars& s, bool cardinality) {
  z3::context& ctx = s.batched.ctx();
  const Num num(ctx, s.integers);
  const z3::expr in_b = s.delivered + s.skipped + s.rest;
  const z3::expr chunk =
      s.path == ctx.bv_val(static_cast<unsigned>(spec::PayloadPath::kChunkNonFinal), 3) ||
      s.path == ctx.bv_val(static_cast<unsigned>(spec::PayloadPath::kChunkFinal), 3);
  z3::expr out = s.delivered >= num(0) && s.skipped >= num(0) && s.rest >= num(0) &&
                 s.beyond >= num(0) && s.batch_size >= num(0) &&
                 z3::implies(s.parse_failure, s.batch_size >= num(1)) &&
                 z3::implies(s.parse_failure && in_b == s.batch_size, s.rest >= num(1)) &&
                 z3::implies(s.dead_letter, !s.parse_failure && s.skipped >= num(1)) &&
                 z3::implies(!s.batched, s.batch_size == num(1)) &&
                 z3::implies(chunk, !s.batched);
  if (cardinality) {
    out = out && in_b <= s.batch_size && z3::implies(!s.ack_present, in_b == s.batch_size);
  }
  if (s.integers) {
    out = out && s.batch_size <= ctx.int_val(spec::kMaxPermits) && s.field >= 0 &&
          s.field <= ctx.int_val(UINT64_MAX);
  }
  return out;
}

SummaryOutcome encode_summary(const spec::Ruleset& rules, const SummaryVars& s) {
  z3::context& ctx = s.batched.ctx();
  const Num num(ctx, s.integers);
  const z3::expr yes = ctx.bool_val(true);
  const z3::expr no = ctx.bool_val(false);
  const z3::expr zero = num(0);
  const z3::expr one = num(1);
  const z3::expr& b = s.batch_size;
  auto stage_is = [&](unsigned x) { return s.stage == ctx.bv_val(x, 2); };
  auto code = [&](FailureStage x) { return ctx.bv_val(failure_code(x), 3); };

  // C1 (1): read only by rulesets whose client knows the field.
  const z3::expr read = rules.client_reads_message_permits ? s.field_present : no;
  const z3::expr in_b = s.delivered + s.skipped + s.rest;
  // C2 (X6: every ack_set bit, those beyond B included).
  const z3::expr all = z3::ite(s.ack_present, in_b + s.beyond, zero);
  const z3::expr early_p =
      z3::ite(read && s.field_in_range, s.field_value, z3::ite(all > zero, all, one));
  // C3/C5/C6: expected is |D|; the field equals it only in range (|D| = 0 has no deliverable).
  const z3::expr no_deliverable = b == zero || (s.ack_present && in_b == zero);
  const z3::expr field_eq = s.field_in_range && s.field_value == in_b;
  const z3::expr v_inconsistent = z3::ite(read, no_deliverable || !field_eq, no_deliverable);
  const z3::expr v_p = z3::ite(read, s.field_value, z3::ite(no_deliverable, early_p, in_b));

  const z3::expr pe_c4 = read && !s.field_in_range;  // C4
  // The stages (C4, C7, C5, decompression, the payload paths) and the P: one helper.
  const auto& [early_fail, after_meta, inconsistent, pe_inconsistent, fail_inconsistent, valid,
               decompress, path_reached, chunk, crypto_discard, crypto_fail, specialised, native,
               batch_run, single_run, p, closes] =
      stage_predicates(rules, pe_c4, v_inconsistent, s.stage, s.path, s.batched, early_p, v_p);

  // Batch expansion (K2, K3, K8).
  z3::expr claimed_b = s.delivered;
  z3::expr failure_b = z3::ite(s.parse_failure, code(FailureStage::kBatch), ctx.bv_val(0, 3));
  z3::expr k8 = no;
  if (rules.budget_tracked) {
    k8 = s.delivered > p;
    claimed_b = z3::ite(k8, p, s.delivered);
    failure_b = z3::ite(k8, code(FailureStage::kInconsistent), failure_b);
  }

  // A single message: index 0's fate.
  auto fate_is = [&](spec::IndexFate x) {
    return s.fate == ctx.bv_val(static_cast<unsigned>(x), 3);
  };
  const z3::expr handoff_fails = fate_is(spec::IndexFate::kHandoffFails);
  const z3::expr skip0 = fate_is(spec::IndexFate::kDuplicate) ||
                         fate_is(spec::IndexFate::kCompacted) ||
                         fate_is(spec::IndexFate::kBeforeStart) ||
                         fate_is(spec::IndexFate::kDeadLetter);
  const z3::expr early_return0 =
      fate_is(spec::IndexFate::kDuplicate) || fate_is(spec::IndexFate::kDeadLetter);
  const z3::expr hand_off_ok = rules.budget_tracked ? p >= one : yes;
  const z3::expr claimed_s = z3::ite(handoff_fails || skip0 || !hand_off_ok, zero, one);
  const z3::expr direct_s = rules.direct_returns != spec::DirectReturns::kFromBudget
                                ? num.of(skip0 && early_return0)
                                : zero;
  // S1-S4.
  const z3::expr direct_sp = z3::ite(chunk, one, z3::ite(crypto_discard, b, zero));
  const z3::expr transferred =
      rules.direct_returns == spec::DirectReturns::kFromBudget ? specialised : no;

  const z3::expr failure = z3::ite(
      early_fail,
      z3::ite(stage_is(kStageChecksum), code(FailureStage::kChecksum),
              code(FailureStage::kMetadata)),
      z3::ite(fail_inconsistent, code(FailureStage::kInconsistent),
              z3::ite(decompress, code(FailureStage::kDecompress),
                      z3::ite(batch_run, failure_b, ctx.bv_val(0, 3)))));
  const z3::expr claimed = z3::ite(batch_run, claimed_b, z3::ite(single_run, claimed_s, zero));
  const z3::expr skipped =
      z3::ite(batch_run, s.skipped, z3::ite(single_run, num.of(skip0), zero));
  const z3::expr direct = z3::ite(specialised, direct_sp, z3::ite(single_run, direct_s, zero));
  const z3::expr progress_b = z3::ite(early_fail, one, b);

  // spec::settle_amount (K5, C7), as encode_settle_amount.
  auto failed = [&](FailureStage x) { return failure == code(x); };
  const z3::expr early = failed(FailureStage::kChecksum) || failed(FailureStage::kMetadata) ||
                         failed(FailureStage::kDecompress);
  z3::expr rest = zero;
  if (rules.budget_tracked) {
    z3::expr owned = p - claimed;
    if (rules.direct_returns == spec::DirectReturns::kFromBudget) owned = owned - direct;
    rest = num.clamp_zero(owned);
  } else if (rules.batch_failure == spec::BatchFailureReturn::kRemainingBudget) {
    rest = num.clamp_zero(p - claimed - direct);
  } else {
    const z3::expr sk = z3::ite(progress_b > one, skipped, zero);
    rest = sk + num.of(failed(FailureStage::kBatch) || failed(FailureStage::kInconsistent));
  }
  if (rules.early_failure == spec::EarlyFailureReturn::kOne) rest = z3::ite(early, one, rest);
  const z3::expr settle = z3::ite(transferred, zero, rest);
  const z3::expr protocol_error = pe_c4 || pe_inconsistent || (closes ? batch_run && k8 : no);
  return SummaryOutcome{
      .p = p,
      .protocol_error = protocol_error,
      .early_failure = early_fail,
      .inconsistent = inconsistent,
      .decompress = decompress,
      .path_reached = path_reached,
      .specialised = specialised,
      .single_run = single_run,
      .batch_run = batch_run,
      .claimed = z3::ite(protocol_error, zero, claimed),
      .direct = z3::ite(protocol_error, zero, direct),
      .settle = z3::ite(protocol_error, zero, settle),
      .total = z3::ite(protocol_error, zero, claimed + direct + settle),
      .transferred = transferred,
  };
}

std::optional<spec::CommandSituation> situation_from_summary(const z3::model& m,
                                                             const SummaryVars& s,
                                                             std::int64_t max_b) {
  auto num = [&](const z3::expr& e) { return m.eval(e, true).get_numeral_int64(); };
  const std::int64_t b = num(s.batch_size);
  const std::int64_t delivered = num(s.delivered), skipped = num(s.skipped), rest = num(s.rest);
  const std::int64_t beyond = num(s.beyond);
  const std::int64_t in_b = delivered + skipped + rest;
  if (b < 0 || b + beyond > max_b || in_b > b) return std::nullopt;
  spec::CommandSituation c{.inc = spec::Id::number(1), .cmd = spec::Id::number(1),
                           .cnx = spec::Id::text("c1")};
  c.batch_size = b;
  c.batched = truth(m, s.batched);
  if (truth(m, s.field_present)) c.message_permits = uvalue(m, s.field);
  const bool ack_present = truth(m, s.ack_present);
  std::vector<bool> ack(static_cast<std::size_t>(b + beyond), false);
  if (!c.batched) {
    if (b != 1 || in_b > 1) return std::nullopt;
    ack[0] = in_b == 1;
    const std::uint64_t f = value(m, s.fate);
    c.fates.push_back(f == 7 ? spec::IndexFate::kDeliver : static_cast<spec::IndexFate>(f));
  } else {
    // Handed off, skipped (a dead letter first when there is one), then the rest.
    std::size_t at = 0;
    auto put = [&](std::int64_t n, spec::IndexFate fate, bool deliverable) {
      for (std::int64_t i = 0; i < n; ++i, ++at) {
        ack[at] = deliverable;
        c.fates.push_back(fate);
      }
    };
    put(delivered, spec::IndexFate::kDeliver, true);
    if (skipped > 0 && truth(m, s.dead_letter)) {
      put(1, spec::IndexFate::kDeadLetter, true);
      put(skipped - 1, spec::IndexFate::kDuplicate, true);
    } else {
      put(skipped, spec::IndexFate::kDuplicate, true);
    }
    const std::int64_t undeliverable = b - in_b;
    if (truth(m, s.parse_failure)) {
      // The first parse failure: undeliverable when some index is, else one of the rest.
      const bool parse_deliverable = undeliverable == 0;
      if (parse_deliverable && rest < 1) return std::nullopt;
      put(1, spec::IndexFate::kParseFails, parse_deliverable);
      put(parse_deliverable ? rest - 1 : rest, spec::IndexFate::kDeliver, true);
      put(parse_deliverable ? 0 : undeliverable - 1, spec::IndexFate::kDeliver, false);
    } else {
      put(rest, spec::IndexFate::kHandoffFails, true);
      put(undeliverable, spec::IndexFate::kDeliver, false);
    }
    while (!c.fates.empty() && c.fates.back() == spec::IndexFate::kDeliver) c.fates.pop_back();
  }
  for (std::int64_t i = b; i < b + beyond; ++i) ack[static_cast<std::size_t>(i)] = true;
  if (ack_present) {
    std::vector<std::int64_t> ws(static_cast<std::size_t>(std::max<std::int64_t>(1, (b + beyond + 63) / 64)), 0);
    for (std::size_t i = 0; i < ack.size(); ++i) {
      if (ack[i]) ws[i / 64] |= static_cast<std::int64_t>(std::uint64_t{1} << (i % 64));
    }
    c.ack_set = spec::AckSet(std::move(ws));
  } else if (in_b != b) {
    return std::nullopt;
  }
  switch (value(m, s.stage)) {
    case kStageChecksum:
      c.early_failure = FailureStage::kChecksum;
      break;
    case kStageMetadata:
      c.early_failure = FailureStage::kMetadata;
      break;
    case kStageDecompress:
      c.early_failure = FailureStage::kDecompress;
      break;
    default:
      break;
  }
  const std::uint64_t path = value(m, s.path);
  c.path = path <= static_cast<std::uint64_t>(spec::PayloadPath::kCryptoConsume)
               ? static_cast<spec::PayloadPath>(path)
               : spec::PayloadPath::kNative;
  return c;
}

}  // namespace permitcheck::solver::internal
