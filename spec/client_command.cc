#include "spec/client_command.h"

#include "absl/strings/str_cat.h"
#include "spec/resolve.h"

namespace permitcheck::spec {
namespace {

std::optional<SkipReason> skip_reason_of(IndexFate fate) {
  switch (fate) {
    case IndexFate::kDuplicate:
      return SkipReason::kDuplicate;
    case IndexFate::kCompacted:
      return SkipReason::kCompacted;
    case IndexFate::kBeforeStart:
      return SkipReason::kBeforeStart;
    case IndexFate::kDeadLetter:
      return SkipReason::kDeadLetter;
    default:
      return std::nullopt;
  }
}

// Builds one command's events while tracking what the terminal transition must return.
class Handler {
 public:
  Handler(const Ruleset& rules, const CommandSituation& s) : rules_(rules), s_(s), budget_(rules, 0) {}

  CommandRun run() {
    emit(Recv{.inc = s_.inc, .cmd = s_.cmd, .message_permits = s_.message_permits,
              .ack_set = s_.ack_set});
    const Resolution early = resolve_early(rules_, s_.message_permits, s_.ack_set);
    resolved(early);

    // C4: an out-of-range explicit value closes the source connection; no credit.
    if (rules_.client_reads_message_permits && s_.message_permits &&
        !message_permits_in_range(*s_.message_permits)) {
      emit(ProtocolError{.cnx = s_.cnx,
                         .reason = absl::StrCat("message_permits = ", *s_.message_permits)});
      out_.closes_connection = true;
      return std::move(out_);
    }
    // C2/C7: failures before metadata settle the early value.
    if (s_.early_failure == FailureStage::kChecksum ||
        s_.early_failure == FailureStage::kMetadata) {
      return fail(*s_.early_failure, std::nullopt);
    }

    emit(Metadata{.cmd = s_.cmd, .batch_size = s_.batch_size});
    budget_.set_batch_size(s_.batch_size);
    const Validation v = validate_permits(rules_, s_.message_permits, s_.ack_set, s_.batch_size);
    resolved(v.resolution);
    if (v.verdict == Verdict::kInconsistent) return inconsistent(v.reason, std::nullopt);
    // S7: a zero-queue consumer cannot take a batch; it closes itself, not the connection.
    if (s_.zero_queue && s_.batched) {
      emit(IncClose{.inc = s_.inc, .reason = CloseReason::kClosed});
      emit(Drop{.cmd = s_.cmd, .n = budget_.p()});
      out_.closes_consumer = true;
      return std::move(out_);
    }
    if (s_.early_failure == FailureStage::kDecompress) {
      return fail(FailureStage::kDecompress, std::nullopt);
    }
    switch (s_.path) {
      case PayloadPath::kChunkNonFinal:
        return specialised(TransferPath::kChunk, DirectPath::kChunk);  // S2
      case PayloadPath::kCryptoDiscard:
        return specialised(TransferPath::kCrypto, DirectPath::kCrypto);  // S3
      case PayloadPath::kCryptoFail:
        return specialised(TransferPath::kCrypto, std::nullopt);  // S4: returns nothing
      case PayloadPath::kNative:
      case PayloadPath::kChunkFinal:
      case PayloadPath::kCryptoConsume:
        break;
    }
    return s_.batched ? expand_batch() : single_message();
  }

 private:
  void emit(Event e) { out_.events.push_back(std::move(e)); }

  // C1/C2: the client records what it resolved (a legacy client resolves nothing).
  void resolved(const Resolution& r) {
    budget_.resolve(r.p);
    if (rules_.budget_tracked) emit(Resolve{.cmd = s_.cmd, .p = r.p, .source = r.source});
  }

  Id message_id(std::int64_t index) const {
    return Id::text(absl::StrCat(s_.msg_prefix, s_.cmd.to_string(), ".", index));
  }

  // K2/K8: hands off the message at `index`; false when the budget has no unit left.
  bool hand_off(std::int64_t index) {
    if (!budget_.claim().ok()) return false;
    const Id msg = message_id(index);
    emit(Claim{.cmd = s_.cmd, .msg = msg, .index = index});
    out_.handed_off.push_back(msg);
    return true;
  }

  // The claim and its restore leave the budget as it was (K2).
  void failed_hand_off(std::int64_t index) {
    const Id msg = message_id(index);
    emit(Claim{.cmd = s_.cmd, .msg = msg, .index = index});
    emit(Restore{.cmd = s_.cmd, .msg = msg});
  }

  void skip(std::int64_t index, SkipReason reason) {
    emit(Skip{.cmd = s_.cmd, .index = index, .reason = reason});
    budget_.skip();
    // Only a release of an object someone else still holds is recorded (S5; F3).
    if (reason == SkipReason::kDeadLetter && releases_at_skip(rules_, reason)) {
      emit(Extension{.ev = std::string(kSkipReleaseEvent)});
    }
  }

  void direct(std::int64_t n, ReturnPath path) {
    emit(DirectReturn{.cmd = s_.cmd, .n = n, .path = std::move(path)});
    budget_.record_direct(n);
    out_.returned_by_command += n;
  }

  // K5: the one terminal transition.
  CommandRun settle() {
    const std::int64_t n = budget_.finish();
    emit(Settle{.cmd = s_.cmd, .n = n});
    out_.returned_by_command += n;
    return std::move(out_);
  }

  // C5: corrupted-data handling; revision C (F4) closes the pooled connection instead, and the
  // messages already handed off end with the incarnation (decision 7).
  CommandRun inconsistent(std::string reason, std::optional<std::int64_t> index) {
    if (rules_.inconsistent == InconsistentHandling::kCloseConnection) {
      emit(ProtocolError{.cnx = s_.cnx, .reason = std::move(reason)});
      for (const Id& msg : out_.handed_off) emit(Drop{.msg = msg, .n = 1});
      out_.handed_off.clear();
      out_.closes_connection = true;
      return std::move(out_);
    }
    return fail(FailureStage::kInconsistent, index);
  }

  CommandRun fail(FailureStage stage, std::optional<std::int64_t> index) {
    emit(Corrupt{.cmd = s_.cmd, .stage = stage, .index = index});
    budget_.fail(stage);
    return settle();
  }

  // S1-S4: ownership moves to the path (under K6; legacy and revision B keep the old direct
  // return beside whatever the command path does).
  // `returns`: the direct path whose prescribed return (specialised_return) the path makes.
  CommandRun specialised(TransferPath path, std::optional<DirectPath> returns) {
    if (rules_.direct_returns == DirectReturns::kFromBudget) {
      emit(Transfer{.cmd = s_.cmd, .path = path});
      budget_.transfer();
    }
    if (returns) {
      const std::int64_t n = specialised_return(*returns, s_.batch_size).value_or(0);
      if (n > 0) direct(n, *returns);
    }
    return settle();
  }

  CommandRun single_message() {
    const IndexFate fate = s_.fates.empty() ? IndexFate::kDeliver : s_.fates.front();
    if (fate == IndexFate::kHandoffFails) {
      failed_hand_off(0);
    } else if (const std::optional<SkipReason> reason = skip_reason_of(fate)) {
      skip(0, *reason);
      // Pulsar's early returns for a single duplicate or dead-letter message. Under K6 they are
      // rewritten: the unit stays command-owned and the terminal transition returns it.
      const bool early_return =
          *reason == SkipReason::kDuplicate || *reason == SkipReason::kDeadLetter;
      if (early_return && rules_.direct_returns != DirectReturns::kFromBudget) {
        direct(1, *reason == SkipReason::kDuplicate ? DirectPath::kDuplicate
                                                    : DirectPath::kDeadLetter);
      }
    } else {
      hand_off(0);
    }
    return settle();
  }

  CommandRun expand_batch() {
    const std::int64_t decoded = s_.decoded.value_or(s_.batch_size);
    for (std::int64_t i = 0; i < decoded; ++i) {
      // Every index is deserialized, deliverable or not; only deliverable ones touch the budget.
      const auto at = static_cast<std::size_t>(i);
      const IndexFate fate = at < s_.fates.size() ? s_.fates[at] : IndexFate::kDeliver;
      if (fate == IndexFate::kParseFails) return fail(FailureStage::kBatch, i);
      if (!s_.ack_set.absent() && !s_.ack_set.is_deliverable(i)) continue;  // K3
      if (fate == IndexFate::kHandoffFails) {
        failed_hand_off(i);
      } else if (const std::optional<SkipReason> reason = skip_reason_of(fate)) {
        skip(i, *reason);
      } else if (!hand_off(i)) {  // K8 -> C5: more messages than P
        return inconsistent(absl::StrCat("more deliverable messages than P = ", budget_.p()), i);
      }
    }
    return settle();
  }

  const Ruleset& rules_;
  const CommandSituation& s_;
  CommandBudget budget_;  // K1-K8, S1: every decision about the command's units
  CommandRun out_;
};

}  // namespace

CommandRun handle_command(const Ruleset& rules, const CommandSituation& situation) {
  return Handler(rules, situation).run();
}

bool releases_at_skip(const Ruleset& rules, SkipReason reason) {
  switch (reason) {
    case SkipReason::kDuplicate:
      return true;  // S6
    case SkipReason::kDeadLetter:
      return rules.skipped_release == SkippedRelease::kAll;  // S5 (F3)
    case SkipReason::kCompacted:
    case SkipReason::kBeforeStart:
      return false;
  }
  return false;
}

std::vector<Event> returns_of(const CommandRun& run) {
  std::vector<Event> out;
  out.reserve(run.handed_off.size());
  for (const Id& msg : run.handed_off) out.push_back(MsgReturn{.msg = msg, .n = 1});
  return out;
}

}  // namespace permitcheck::spec
