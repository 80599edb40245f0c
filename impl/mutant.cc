#include "impl/mutant.h"

#include <array>

namespace permitcheck::impl {
namespace {

constexpr std::array kMutants = {
    MutantInfo{Mutant::kConsumerDebitPreAdmission, "consumer_debit_pre_admission", "B4",
               "consumer debited with the pre-admission sum"},
    MutantInfo{Mutant::kSharedNormalLoopPreAdmission, "shared_normal_loop_pre_admission", "B6",
               "persistent Shared normal send loop debits the pre-admission count"},
    MutantInfo{Mutant::kSharedClassicReplayPreAdmission, "shared_classic_replay_pre_admission",
               "B6", "persistent Shared classic replay loop debits the pre-admission count"},
    MutantInfo{Mutant::kStickyKeyAggregatePreAdmission, "sticky_key_aggregate_pre_admission",
               "B6", "persistent Key_Shared send loop debits the pre-admission count"},
    MutantInfo{Mutant::kNonPersistentKeySharedPreAdmission,
               "non_persistent_key_shared_pre_admission", "B6",
               "non-persistent Key_Shared debits the pre-admission count"},
    MutantInfo{Mutant::kSerializeBatchSize, "serialize_batch_size", "B7",
               "message_permits carries B instead of the finalized P"},
    MutantInfo{Mutant::kOmitFieldForOne, "omit_field_for_one", "W3",
               "message_permits omitted when P = 1"},
    MutantInfo{Mutant::kClampNegativeBalance, "clamp_negative_balance", "B9",
               "a negative balance is clamped to 0 after the debit"},
    MutantInfo{Mutant::kCandidateIgnoresAckSet, "candidate_ignores_ack_set", "B2",
               "candidate P is B even for a partial batch"},
    MutantInfo{Mutant::kFlowAbsolute, "flow_absolute", "B10",
               "Flow sets the balance instead of adding to it"},
    MutantInfo{Mutant::kRemovalKeepsAggregate, "removal_keeps_aggregate", "B11",
               "a removed consumer's balance stays in the dispatcher aggregate"},
    MutantInfo{Mutant::kUnackedUsesBatchSize, "unacked_uses_batch_size", "B5",
               "unacked count rises by B instead of P"},
    MutantInfo{Mutant::kSendRejectedEntry, "send_rejected_entry", "B1",
               "an entry refused by pending-ack admission is sent anyway"},
    MutantInfo{Mutant::kEarlyFailureReturnsOne, "early_failure_returns_one", "C7",
               "checksum/metadata/decompression failure settles 1"},
    MutantInfo{Mutant::kEarlyIgnoresExplicit, "early_ignores_explicit", "C2",
               "early resolution ignores a present message_permits"},
    MutantInfo{Mutant::kBudgetOffByOne, "budget_off_by_one", "K1",
               "the command budget starts at P - 1"},
    MutantInfo{Mutant::kMissingRestore, "missing_restore", "K2",
               "a failed hand-off does not restore its unit"},
    MutantInfo{Mutant::kDuplicateDoubleReturn, "duplicate_double_return", "K6",
               "a duplicate returns 1 directly beside the budget"},
    MutantInfo{Mutant::kSkipClaimsUnit, "skip_claims_unit", "K4",
               "a skipped index takes its unit out of the budget"},
    MutantInfo{Mutant::kBeforeStartReturnsNothing, "before_start_returns_nothing", "K4",
               "a message before startMessageId returns nothing"},
    MutantInfo{Mutant::kBatchFailureSkippedPlusOne, "batch_failure_skipped_plus_one", "K5",
               "a batch failure returns the skipped messages plus 1"},
    MutantInfo{Mutant::kNoIdentityRecheck, "no_identity_recheck", "N5",
               "a queued Flow is written without re-checking its permit state"},
    MutantInfo{Mutant::kCopyAccumulator, "copy_accumulator", "N2",
               "the replacement permit state starts with the old accumulator"},
    MutantInfo{Mutant::kReturnToCurrentState, "return_to_current_state", "N3",
               "a late message return credits the consumer's current state"},
    MutantInfo{Mutant::kStaleEpochToCurrent, "stale_epoch_to_current", "M2",
               "a stale-epoch discard credits the consumer's current state"},
    MutantInfo{Mutant::kFinishTwice, "finish_twice", "K5",
               "the terminal transition does not zero the budget"},
    MutantInfo{Mutant::kThresholdStrict, "threshold_strict", "N5",
               "the Flow is due only when the accumulator exceeds T"},
    MutantInfo{Mutant::kInitialGrantMissesOne, "initial_grant_misses_one", "N4",
               "the initial Flow grants Q - 1"},
    MutantInfo{Mutant::kFlowBeforeSubscribeOk, "flow_before_subscribe_ok", "N4",
               "the initial Flow is written before Subscribe succeeded"},
    MutantInfo{Mutant::kNoSwapOnFlow, "no_swap_on_flow", "N5",
               "the accumulator is not reset when its Flow is queued"},
    MutantInfo{Mutant::kCryptoDiscardWithoutTransfer, "crypto_discard_without_transfer", "S1",
               "crypto DISCARD returns B and the generic budget drains too"},
    MutantInfo{Mutant::kChunkWithoutTransfer, "chunk_without_transfer", "S1",
               "a non-final chunk returns 1 and the generic budget drains too"},
    MutantInfo{Mutant::kRedeliverClearsWithoutReturn, "redeliver_clears_without_return", "M1",
               "messages cleared by redeliverUnacknowledgedMessages never return"},
    MutantInfo{Mutant::kStaleKeepsGauges, "stale_keeps_gauges", "M2",
               "a stale-epoch discard leaves the prefetch gauges raised"},
    MutantInfo{Mutant::kProtocolErrorSettles, "protocol_error_settles", "C4",
               "an out-of-range message_permits is settled instead of closing the connection"},
    MutantInfo{Mutant::kSendAtZeroPermits, "send_at_zero_permits", "B12",
               "the single-active dispatcher starts a send when the consumer has no permits"},
    MutantInfo{Mutant::kFlowWithoutRead, "flow_without_read", "B13",
               "a Flow that makes available positive does not trigger a read"},
    MutantInfo{Mutant::kZeroQueueGrantsTwo, "zero_queue_grants_two", "E5",
               "a zero-queue receive() grants 2 permits instead of 1"},
    MutantInfo{Mutant::kAckIgnored, "ack_ignored", "E6",
               "the broker ignores acknowledgements: entries stay pending at their consumer"},
    MutantInfo{Mutant::kKeySharedNoNextRead, "key_shared_no_next_read", "B13",
               "Key_Shared does not read on after a send that left backlog and permits"},
};

}  // namespace

std::span<const MutantInfo> all_mutants() { return kMutants; }

const MutantInfo* find_mutant(std::string_view name) {
  for (const MutantInfo& m : kMutants) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

bool mutants_compiled_in() {
#ifdef PERMITCHECK_MUTANTS
  return true;
#else
  return false;
#endif
}

}  // namespace permitcheck::impl
