// Seeded single-point mutants of the rev-d implementation, for measuring how well the
// properties find bugs (mutation score).
//
// Mutant code exists only in the test-only library `permitcheck_impl_mutants` (compiled with
// PERMITCHECK_MUTANTS). In the default `permitcheck_impl` every mutation point compiles to the
// original code and WorldConfig::mutant is ignored.
//
//   for (const MutantInfo& m : all_mutants()) {
//     WorldConfig config{.mutant = m.id};   // run the properties against it
//   }
#ifndef PERMITCHECK_IMPL_MUTANT_H_
#define PERMITCHECK_IMPL_MUTANT_H_

#include <span>
#include <string_view>

namespace permitcheck::impl {

enum class Mutant {
  kNone,
  // Broker.
  kConsumerDebitPreAdmission,       // B4: consumer debited with the pre-admission sum
  kSharedNormalLoopPreAdmission,    // B6: persistent Shared normal loop, pre-admission aggregate
  kSharedClassicReplayPreAdmission, // B6: persistent Shared classic replay loop
  kStickyKeyAggregatePreAdmission,  // B6: persistent Key_Shared (sticky) aggregate
  kNonPersistentKeySharedPreAdmission,  // B6: non-persistent Key_Shared aggregate
  kSerializeBatchSize,              // B7: message_permits = B instead of P
  kOmitFieldForOne,                 // W3: field omitted when P = 1
  kClampNegativeBalance,            // B9: balance clamped at 0 after a debit
  kCandidateIgnoresAckSet,          // B2: candidate P = B for partial batches
  kFlowAbsolute,                    // B10: Flow sets the balance instead of adding
  kRemovalKeepsAggregate,           // B6/B11: removed consumer's balance stays in the aggregate
  kUnackedUsesBatchSize,            // B5: unacked rises by B
  kSendRejectedEntry,               // B1: a rejected entry is still sent
  // Client.
  kEarlyFailureReturnsOne,          // C7: checksum/metadata/decompression failure settles 1
  kEarlyIgnoresExplicit,            // C2: early resolution ignores message_permits
  kBudgetOffByOne,                  // K1: the budget starts at P - 1
  kMissingRestore,                  // K2: a failed hand-off keeps its unit
  kDuplicateDoubleReturn,           // K6: duplicate returns directly beside the budget
  kSkipClaimsUnit,                  // K4: a skipped index takes its unit out of the budget
  kBeforeStartReturnsNothing,       // K4: before-startMessageId unit dropped (L9)
  kBatchFailureSkippedPlusOne,      // K5: batch failure returns K + 1 (L4/L5)
  kNoIdentityRecheck,               // N5: queued Flow written without re-checking the state
  kCopyAccumulator,                 // N2: replacement state starts with the old accumulator
  kReturnToCurrentState,            // N3: late return credits the current state (L7)
  kStaleEpochToCurrent,             // M2: stale-epoch discard credits the current state (L6)
  kFinishTwice,                     // K5: the terminal transition does not zero the budget
  kThresholdStrict,                 // N5: Flow only when the accumulator exceeds T
  kInitialGrantMissesOne,           // N4: initial Flow grants Q - 1
  kFlowBeforeSubscribeOk,           // N4: initial Flow written before Subscribe succeeded
  kNoSwapOnFlow,                    // N5: accumulator not reset when its Flow is queued
  kCryptoDiscardWithoutTransfer,    // S1/K6: crypto DISCARD returns B and the budget drains
  kChunkWithoutTransfer,            // S1/K6: non-final chunk returns 1 and the budget drains
  kRedeliverClearsWithoutReturn,    // M1: messages cleared by redelivery never return
  kStaleKeepsGauges,                // M2: stale-epoch discard leaves the prefetch gauges
  kProtocolErrorSettles,            // C4: out-of-range value settled instead of closing
  kSendAtZeroPermits,               // B12: single active sends one entry at zero permits
  kFlowWithoutRead,                 // B13: a Flow does not trigger a read
  kZeroQueueGrantsTwo,              // E5: a zero-queue receive() grants 2 permits
  kAckIgnored,                      // E6: the broker ignores acknowledgements
  kKeySharedNoNextRead,             // B13: Key_Shared reads no further after a send
};

struct MutantInfo {
  Mutant id;
  std::string_view name;         // "budget_off_by_one"
  std::string_view rule;         // the rule it breaks: "K1"
  std::string_view description;  // one line
};

// Every mutant except kNone, in declaration order.
std::span<const MutantInfo> all_mutants();

const MutantInfo* find_mutant(std::string_view name);

// True in the permitcheck_impl_mutants build only.
bool mutants_compiled_in();

}  // namespace permitcheck::impl

#endif  // PERMITCHECK_IMPL_MUTANT_H_
