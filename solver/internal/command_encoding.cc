#include "solver/internal/command_encoding.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "spec/finalize.h"
#include "spec/plain_text.h"

namespace permitcheck::solver::internal {
namespace {

using spec::FailureStage;

z3::expr count(z3::context& ctx, std::uint64_t n) { return ctx.bv_val(n, kCountBits); }

unsigned fate_code(spec::IndexFate fate) { return static_cast<unsigned>(fate); }

// Per-index masks of a fate: bit i set when index i has that fate.
struct FateMasks {
  z3::expr deliver;  // codes 0 and 7
  z3::expr skip;     // codes 1-4 (K4)
  z3::expr parse;    // code 6
};

FateMasks fate_masks(const CommandVars& v) {
  const z3::expr& f0 = v.fate0;
  const z3::expr& f1 = v.fate1;
  const z3::expr& f2 = v.fate2;
  return FateMasks{
      .deliver = (~f2 & ~f1 & ~f0) | (f2 & f1 & f0),
      .skip = (~f2 & (f1 | f0)) | (f2 & ~f1 & ~f0),
      .parse = f2 & f1 & ~f0,
  };
}

}  // namespace

CommandCounts command_counts(const CommandVars& v, PopcountEncoding pc) {
  z3::context& ctx = v.batch_size.ctx();
  const unsigned w = v.width;
  const z3::expr b_mask = low_mask(resize(v.batch_size, w));
  const FateMasks fates = fate_masks(v);
  const z3::expr parse = fates.parse & b_mask;
  const z3::expr parse_failure = parse != ctx.bv_val(0, w);
  // Expansion stops at the first parse failure: every index is deserialized, deliverable or not.
  const z3::expr lowest = parse & -parse;
  const z3::expr processed = z3::ite(parse_failure, lowest - ctx.bv_val(1, w), b_mask);
  const z3::expr d = z3::ite(v.ack_present, v.ack, ~ctx.bv_val(0, w)) & b_mask;  // K3
  const z3::expr handed = d & processed & fates.deliver;
  const z3::expr skipped = d & processed & fates.skip;
  const z3::expr delivered_n = popcount(handed, kCountBits, pc);
  const z3::expr skipped_n = popcount(skipped, kCountBits, pc);
  const z3::expr rest_n = popcount(d & ~(handed | skipped), kCountBits, pc);
  return CommandCounts{
      .parse_failure = parse_failure,
      .delivered = delivered_n,
      .skipped = skipped_n,
      .rest = rest_n,
      .beyond = popcount(v.ack & ~b_mask, kCountBits, pc),
      .in_b = delivered_n + skipped_n + rest_n,
  };
}

namespace {

// max(0, x) for a signed count.
z3::expr clamp_zero(const z3::expr& x) {
  return z3::ite(z3::sge(x, x.ctx().bv_val(0, kCountBits)), x, x.ctx().bv_val(0, kCountBits));
}

}  // namespace

CommandVars make_command_vars(z3::context& ctx, unsigned width, const std::string& prefix) {
  auto name = [&](const char* n) { return prefix + "." + n; };
  return CommandVars{
      .width = width,
      .batch_size = ctx.bv_const(name("B").c_str(), bits_for(width) + 1),
      .batched = ctx.bool_const(name("batched").c_str()),
      .field_present = ctx.bool_const(name("field_present").c_str()),
      .field = ctx.bv_const(name("field").c_str(), 64),
      .ack_present = ctx.bool_const(name("ack_present").c_str()),
      .ack = ctx.bv_const(name("ack").c_str(), width),
      .fate0 = ctx.bv_const(name("fate0").c_str(), width),
      .fate1 = ctx.bv_const(name("fate1").c_str(), width),
      .fate2 = ctx.bv_const(name("fate2").c_str(), width),
      .stage = ctx.bv_const(name("stage").c_str(), 2),
      .path = ctx.bv_const(name("path").c_str(), 3),
  };
}

z3::expr command_domain(const CommandVars& v) {
  z3::context& ctx = v.batch_size.ctx();
  const unsigned bw = v.batch_size.get_sort().bv_size();
  const z3::expr one = ctx.bv_val(1, bw);
  const z3::expr chunk =
      v.path == ctx.bv_val(static_cast<unsigned>(spec::PayloadPath::kChunkNonFinal), 3) ||
      v.path == ctx.bv_val(static_cast<unsigned>(spec::PayloadPath::kChunkFinal), 3);
  return z3::ule(v.batch_size, ctx.bv_val(v.width, bw)) &&
         z3::implies(!v.batched, v.batch_size == one) && z3::implies(chunk, !v.batched);
}

z3::expr candidate(const CommandVars& v, PopcountEncoding pc) {
  z3::context& ctx = v.batch_size.ctx();
  return z3::ite(v.batch_size == ctx.bv_val(0, v.batch_size.get_sort().bv_size()), count(ctx, 0),
                 command_counts(v, pc).in_b);
}

z3::expr encode_settle_amount(const spec::Ruleset& rules, const SymProgress& pr) {
  z3::context& ctx = pr.p.ctx();
  auto is = [&](FailureStage s) { return pr.failure == ctx.bv_val(failure_code(s), 3); };
  const z3::expr early =
      is(FailureStage::kChecksum) || is(FailureStage::kMetadata) || is(FailureStage::kDecompress);

  z3::expr rest = count(ctx, 0);
  if (rules.budget_tracked) {  // K5: what is still command-owned
    z3::expr owned = pr.p - pr.claimed;
    if (rules.direct_returns == spec::DirectReturns::kFromBudget) owned = owned - pr.direct;  // K6
    rest = clamp_zero(owned);
  } else {
    switch (rules.batch_failure) {
      case spec::BatchFailureReturn::kRemainingBudget:
        rest = clamp_zero(pr.p - pr.claimed - pr.direct);
        break;
      case spec::BatchFailureReturn::kSkippedPlusOne: {
        const z3::expr skipped =
            z3::ite(z3::sgt(pr.batch_size, count(ctx, 1)), pr.skipped, count(ctx, 0));
        const z3::expr batch_failure = is(FailureStage::kBatch) || is(FailureStage::kInconsistent);
        rest = skipped + bit(batch_failure, kCountBits);  // L4, L5
        break;
      }
    }
  }
  if (rules.early_failure == spec::EarlyFailureReturn::kOne) {
    rest = z3::ite(early, count(ctx, 1), rest);  // L1-L3
  }
  return z3::ite(pr.transferred, count(ctx, 0), rest);  // S1
}

StagePredicates stage_predicates(const spec::Ruleset& rules, const z3::expr& pe_c4,
                                 const z3::expr& v_inconsistent, const z3::expr& stage,
                                 const z3::expr& path, const z3::expr& batched,
                                 const z3::expr& early_p, const z3::expr& v_p) {
  z3::context& ctx = pe_c4.ctx();
  const z3::expr no = ctx.bool_val(false);
  auto stage_is = [&](unsigned s) { return stage == ctx.bv_val(s, 2); };
  auto path_is = [&](spec::PayloadPath p) { return path == ctx.bv_val(static_cast<unsigned>(p), 3); };
  const z3::expr early_fail = !pe_c4 && (stage_is(kStageChecksum) || stage_is(kStageMetadata));
  const z3::expr after_meta = !pe_c4 && !early_fail;
  const z3::expr inconsistent = after_meta && v_inconsistent;
  const bool closes = rules.inconsistent == spec::InconsistentHandling::kCloseConnection;
  const z3::expr valid = after_meta && !v_inconsistent;
  const z3::expr path_reached = valid && !stage_is(kStageDecompress);
  const z3::expr chunk = path_reached && path_is(spec::PayloadPath::kChunkNonFinal);
  const z3::expr crypto_discard = path_reached && path_is(spec::PayloadPath::kCryptoDiscard);
  const z3::expr crypto_fail = path_reached && path_is(spec::PayloadPath::kCryptoFail);
  const z3::expr specialised = chunk || crypto_discard || crypto_fail;
  const z3::expr native = path_reached && !specialised;
  return StagePredicates{.early_fail = early_fail,
                         .after_meta = after_meta,
                         .inconsistent = inconsistent,
                         .pe_inconsistent = closes ? inconsistent : no,
                         .fail_inconsistent = closes ? no : inconsistent,
                         .valid = valid,
                         .decompress = valid && stage_is(kStageDecompress),
                         .path_reached = path_reached,
                         .chunk = chunk,
                         .crypto_discard = crypto_discard,
                         .crypto_fail = crypto_fail,
                         .specialised = specialised,
                         .native = native,
                         .batch_run = native && batched,
                         .single_run = native && !batched,
                         .p = z3::ite(pe_c4 || early_fail, early_p, v_p),
                         .closes = closes};
}

CommandOutcome encode_command(const spec::Ruleset& rules, const CommandVars& v,
                              PopcountEncoding pc) {
  z3::context& ctx = v.batch_size.ctx();
  const unsigned bw = v.batch_size.get_sort().bv_size();
  const z3::expr yes = ctx.bool_val(true);
  const z3::expr no = ctx.bool_val(false);
  const z3::expr zero = count(ctx, 0);
  const z3::expr one = count(ctx, 1);
  const z3::expr b = resize(v.batch_size, kCountBits);
  auto stage_is = [&](unsigned s) { return v.stage == ctx.bv_val(s, 2); };
  auto code = [&](FailureStage s) { return ctx.bv_val(failure_code(s), 3); };

  // C1 step (1) is read only by rulesets whose client knows the field.
  const z3::expr read = rules.client_reads_message_permits ? v.field_present : no;
  const z3::expr in_range = z3::uge(v.field, ctx.bv_val(1, 64)) &&
                            z3::ule(v.field, ctx.bv_val(static_cast<std::uint64_t>(spec::kMaxPermits), 64));
  const z3::expr field_p = resize(v.field, kCountBits);

  const CommandCounts n = command_counts(v, pc);

  // C2: resolve_early (X6: every ack_set bit, those beyond B included).
  const z3::expr all = z3::ite(v.ack_present, n.in_b + n.beyond, zero);
  const z3::expr early_p =
      z3::ite(read && in_range, field_p, z3::ite(z3::ugt(all, zero), all, one));

  // C3/C5/C6: validate_permits once B is known. Expected is the ack_set's bits below B, or B
  // (|D| is B when the ack_set is absent).
  const z3::expr expected = n.in_b;
  const z3::expr no_deliverable =
      v.batch_size == ctx.bv_val(0, bw) || (v.ack_present && expected == zero);
  const z3::expr v_inconsistent =
      z3::ite(read, no_deliverable || v.field != resize(expected, 64), no_deliverable);
  const z3::expr v_p = z3::ite(read, field_p, z3::ite(no_deliverable, early_p, expected));

  // The pipeline, stage by stage (Handler::run).
  const z3::expr pe_c4 = read && !in_range;  // C4
  // The stages (C4, C7, C5, decompression, the payload paths) and the P: one helper.
  const auto& [early_fail, after_meta, inconsistent, pe_inconsistent, fail_inconsistent, valid,
               decompress, path_reached, chunk, crypto_discard, crypto_fail, specialised, native,
               batch_run, single_run, p, closes] =
      stage_predicates(rules, pe_c4, v_inconsistent, v.stage, v.path, v.batched, early_p, v_p);

  // Native batch expansion: indexes below the first parse failure, deliverable ones only.
  const z3::expr parse_failure = n.parse_failure;
  const z3::expr delivered = n.delivered;
  const z3::expr skipped_b = n.skipped;
  z3::expr claimed_b = delivered;
  z3::expr failure_b = z3::ite(parse_failure, code(FailureStage::kBatch), ctx.bv_val(0, 3));
  z3::expr k8 = no;
  if (rules.budget_tracked) {
    // K8: the hand-off after the P-th finds no unit left; expansion stops there (C5).
    k8 = z3::ugt(delivered, p);
    claimed_b = z3::ite(k8, p, delivered);
    failure_b = z3::ite(k8, code(FailureStage::kInconsistent), failure_b);
  }

  // Native single message: only index 0's fate counts.
  const z3::expr f =
      z3::concat(v.fate2.extract(0, 0), z3::concat(v.fate1.extract(0, 0), v.fate0.extract(0, 0)));
  auto fate_is = [&](spec::IndexFate x) { return f == ctx.bv_val(fate_code(x), 3); };
  const z3::expr handoff_fails = fate_is(spec::IndexFate::kHandoffFails);
  const z3::expr skip0 = fate_is(spec::IndexFate::kDuplicate) ||
                         fate_is(spec::IndexFate::kCompacted) ||
                         fate_is(spec::IndexFate::kBeforeStart) ||
                         fate_is(spec::IndexFate::kDeadLetter);
  const z3::expr early_return0 =
      fate_is(spec::IndexFate::kDuplicate) || fate_is(spec::IndexFate::kDeadLetter);
  const z3::expr hand_off_ok = rules.budget_tracked ? z3::uge(p, one) : yes;
  const z3::expr claimed_s = z3::ite(handoff_fails || skip0 || !hand_off_ok, zero, one);
  // Pulsar's early returns for a single duplicate or dead-letter message (rewritten under K6).
  const z3::expr direct_s = rules.direct_returns != spec::DirectReturns::kFromBudget
                                ? bit(skip0 && early_return0, kCountBits)
                                : zero;

  // S1-S4: specialised paths return directly; under K6 ownership moves first.
  const z3::expr direct_sp = z3::ite(chunk, one, z3::ite(crypto_discard, b, zero));
  const z3::expr transferred =
      rules.direct_returns == spec::DirectReturns::kFromBudget ? specialised : no;

  const z3::expr failure = z3::ite(
      early_fail, z3::ite(stage_is(kStageChecksum), code(FailureStage::kChecksum),
                          code(FailureStage::kMetadata)),
      z3::ite(fail_inconsistent, code(FailureStage::kInconsistent),
              z3::ite(decompress, code(FailureStage::kDecompress),
                      z3::ite(batch_run, failure_b, ctx.bv_val(0, 3)))));
  const z3::expr claimed = z3::ite(batch_run, claimed_b, z3::ite(single_run, claimed_s, zero));
  const z3::expr skipped = z3::ite(batch_run, skipped_b, z3::ite(single_run, bit(skip0, kCountBits), zero));
  const z3::expr direct = z3::ite(specialised, direct_sp, z3::ite(single_run, direct_s, zero));
  const SymProgress progress{.p = p,
                             .batch_size = z3::ite(early_fail, one, b),
                             .claimed = claimed,
                             .skipped = skipped,
                             .direct = direct,
                             .failure = failure,
                             .transferred = transferred};
  const z3::expr settle = encode_settle_amount(rules, progress);
  // Revision C (F4) closes the connection on K8 as well.
  const z3::expr protocol_error = pe_c4 || pe_inconsistent || (closes ? batch_run && k8 : no);
  return CommandOutcome{
      .p = p,
      .protocol_error = protocol_error,
      .early_failure = early_fail,
      .inconsistent = inconsistent,
      .decompress = decompress,
      .path_reached = path_reached,
      .specialised = specialised,
      .single_run = single_run,
      .batch_run = batch_run,
      .parse_failure = parse_failure,
      .claimed = z3::ite(protocol_error, zero, claimed),
      .skipped = skipped,
      .direct = z3::ite(protocol_error, zero, direct),
      .settle = z3::ite(protocol_error, zero, settle),
      .total = z3::ite(protocol_error, zero, claimed + direct + settle),
      .failure = failure,
      .transferred = transferred,
  };
}

spec::CommandSituation situation_from(const z3::model& m, const CommandVars& v) {
  spec::CommandSituation s{.inc = spec::Id::number(1), .cmd = spec::Id::number(1),
                           .cnx = spec::Id::text("c1")};
  if (truth(m, v.field_present)) s.message_permits = value(m, v.field);
  if (truth(m, v.ack_present)) {
    std::vector<std::int64_t> ws;
    for (std::uint64_t word : words(m, v.ack)) ws.push_back(static_cast<std::int64_t>(word));
    s.ack_set = spec::AckSet(std::move(ws));
  }
  s.batch_size = static_cast<std::int64_t>(value(m, v.batch_size));
  s.batched = truth(m, v.batched);
  switch (value(m, v.stage)) {
    case kStageChecksum:
      s.early_failure = spec::FailureStage::kChecksum;
      break;
    case kStageMetadata:
      s.early_failure = spec::FailureStage::kMetadata;
      break;
    case kStageDecompress:
      s.early_failure = spec::FailureStage::kDecompress;
      break;
    default:
      break;
  }
  const std::uint64_t path = value(m, v.path);
  s.path = path <= static_cast<std::uint64_t>(spec::PayloadPath::kCryptoConsume)
               ? static_cast<spec::PayloadPath>(path)
               : spec::PayloadPath::kNative;
  const std::vector<std::uint64_t> f0 = words(m, v.fate0);
  const std::vector<std::uint64_t> f1 = words(m, v.fate1);
  const std::vector<std::uint64_t> f2 = words(m, v.fate2);
  const std::int64_t n = s.batched ? std::max<std::int64_t>(s.batch_size, 0) : 1;
  for (std::int64_t i = 0; i < n; ++i) {
    auto bit_of = [&](const std::vector<std::uint64_t>& ws) {
      return (ws[static_cast<std::size_t>(i / 64)] >> (i % 64)) & 1U;
    };
    const unsigned c = static_cast<unsigned>(bit_of(f0) | (bit_of(f1) << 1) | (bit_of(f2) << 2));
    s.fates.push_back(c == 7 ? spec::IndexFate::kDeliver : static_cast<spec::IndexFate>(c));
  }
  // Trailing deliveries are the default: keep the situation short.
  while (!s.fates.empty() && s.fates.back() == spec::IndexFate::kDeliver) s.fates.pop_back();
  return s;
}

std::vector<z3::expr> fix_command(const CommandVars& v, const spec::CommandSituation& s) {
  z3::context& ctx = v.batch_size.ctx();
  const unsigned w = v.width;
  std::vector<z3::expr> out;
  out.push_back(v.batch_size ==
                ctx.bv_val(static_cast<std::uint64_t>(std::max<std::int64_t>(s.batch_size, 0)),
                           v.batch_size.get_sort().bv_size()));
  out.push_back(v.batched == ctx.bool_val(s.batched));
  out.push_back(v.field_present == ctx.bool_val(s.message_permits.has_value()));
  if (s.message_permits) out.push_back(v.field == ctx.bv_val(*s.message_permits, 64));
  out.push_back(v.ack_present == ctx.bool_val(!s.ack_set.absent()));
  // The ack_set and fates as W-bit constants.
  const unsigned nwords = (w + 63) / 64;
  std::vector<std::uint64_t> ack(nwords, 0), f0(nwords, 0), f1(nwords, 0), f2(nwords, 0);
  for (unsigned i = 0; i < w; ++i) {
    if (s.ack_set.is_deliverable(i)) ack[i / 64] |= std::uint64_t{1} << (i % 64);
  }
  const std::size_t nfates = std::min<std::size_t>(s.fates.size(), w);
  for (std::size_t i = 0; i < nfates; ++i) {
    const unsigned c = fate_code(s.fates[i]);
    const std::uint64_t at = std::uint64_t{1} << (i % 64);
    if (c & 1U) f0[i / 64] |= at;
    if (c & 2U) f1[i / 64] |= at;
    if (c & 4U) f2[i / 64] |= at;
  }
  auto bv = [&](const std::vector<std::uint64_t>& ws) { return bv_from_words(ctx, ws, w); };
  out.push_back(v.ack == bv(ack));
  out.push_back(v.fate0 == bv(f0));
  out.push_back(v.fate1 == bv(f1));
  out.push_back(v.fate2 == bv(f2));
  unsigned stage = kStageNone;
  if (s.early_failure == spec::FailureStage::kChecksum) stage = kStageChecksum;
  if (s.early_failure == spec::FailureStage::kMetadata) stage = kStageMetadata;
  if (s.early_failure == spec::FailureStage::kDecompress) stage = kStageDecompress;
  out.push_back(v.stage == ctx.bv_val(stage, 2));
  out.push_back(v.path == ctx.bv_val(static_cast<unsigned>(s.path), 3));
  return out;
}

std::string describe_situation(const spec::CommandSituation& s) {
  std::string out = absl::StrCat("B=", s.batch_size, s.batched ? " (batch)" : " (single message)");
  if (s.message_permits) {
    absl::StrAppend(&out, ", message_permits=", *s.message_permits);
  } else {
    absl::StrAppend(&out, ", message_permits absent");
  }
  if (s.ack_set.absent()) {
    absl::StrAppend(&out, ", ack_set absent");
  } else {
    absl::StrAppend(&out, ", ", spec::acknowledged_text(s.ack_set, s.batch_size));
  }
  if (s.early_failure) {
    absl::StrAppend(&out, ", ", std::string(spec::failure_stage_name(*s.early_failure)), " fails");
  }
  switch (s.path) {
    case spec::PayloadPath::kChunkNonFinal:
      absl::StrAppend(&out, ", non-final chunk");
      break;
    case spec::PayloadPath::kChunkFinal:
      absl::StrAppend(&out, ", final chunk");
      break;
    case spec::PayloadPath::kCryptoDiscard:
      absl::StrAppend(&out, ", crypto DISCARD");
      break;
    case spec::PayloadPath::kCryptoFail:
      absl::StrAppend(&out, ", crypto FAIL");
      break;
    case spec::PayloadPath::kCryptoConsume:
      absl::StrAppend(&out, ", crypto CONSUME");
      break;
    case spec::PayloadPath::kNative:
      break;
  }
  static constexpr const char* kFateNames[] = {"delivered",       "duplicate",       "compacted",
                                               "before start",    "dead letter",     "hand-off fails",
                                               "batch parse fails"};
  for (std::size_t i = 0; i < s.fates.size(); ++i) {
    if (s.fates[i] == spec::IndexFate::kDeliver) continue;
    absl::StrAppend(&out, ", index ", i, " ", kFateNames[static_cast<int>(s.fates[i])]);
  }
  return out;
}

}  // namespace permitcheck::solver::internal
