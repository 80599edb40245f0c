// Rulesets: the proposal's revisions and Pulsar's legacy behaviour, as data.
//
// The specification is written once. Where revisions differ (rulebook sections 10 and 11)
// it asks the Ruleset at a named decision point instead of branching on a revision name,
// so a new revision is a new constant here, never a copy of the code.
//
//   const Ruleset& r = ruleset(RulesetId::kRevD);
//   if (r.direct_returns == DirectReturns::kFromBudget) { ... }   // K6
//   absl::StatusOr<const Ruleset*> l = parse_ruleset("legacy");
#ifndef PERMITCHECK_SPEC_RULESET_H_
#define PERMITCHECK_SPEC_RULESET_H_

#include <span>
#include <string_view>

#include "absl/status/statusor.h"

namespace permitcheck::spec {

// Revision order: legacy, then the proposal's revisions A to D (rulebook section 11).
enum class RulesetId { kLegacy, kRevA, kRevB, kRevC, kRevD };

// Which pre-/post-admission sum a broker debit uses (B1, B4, B6; L8, F2).
enum class DebitSource {
  kFinalized,     // sum of finalized P over admitted entries (B4/B6)
  kPreAdmission,  // sum of candidates over every entry, rejected ones too (legacy L8)
};

// Which dispatcher kinds debit their aggregate with the finalized sum (B6; F2).
enum class DispatcherCoverage {
  kAllSix,                    // B6
  kPersistentSharedOnly,      // revision B: sticky-key dispatchers keep the pre-admission sum
  kNone,                      // legacy: every aggregate uses the pre-admission sum
};

// What a failure before metadata (checksum, metadata parse) and decompression returns (C7; L1-L3).
enum class EarlyFailureReturn {
  kResolvedP,  // settle the resolved P (C2/C7)
  kOne,        // legacy discardMessage(..., 1)
};

// What a batch-deserialization failure returns from the command path (C7/K5; L4-L5).
enum class BatchFailureReturn {
  kRemainingBudget,    // K5: every unit still command-owned
  kSkippedPlusOne,     // legacy: the K skipped deliverable messages plus 1 for the failure
};

// How direct returns relate to the command budget (K6; F1).
enum class DirectReturns {
  kFromBudget,    // K6: taken out of the budget atomically
  kBesideBudget,  // revision B: the budget drains too, so the unit is returned twice
  kNoBudget,      // legacy: no budget exists; the direct return is the only return
};

// What a non-batched message before startMessageId returns (K4; L9).
enum class BeforeStartReturn {
  kCommandOwned,  // K4: the unit stays command-owned and the terminal transition returns it
  kNothing,       // legacy ConsumerImpl: discarded without a permit
};

// Which permit state a late return may credit (M1, N3, E3; L6, L7, F5).
enum class ReturnScope {
  kIncarnation,      // N3: only the retained state, only while current; else dropped
  kCurrentConsumer,  // legacy: whatever incarnation of the consumer is current now
  kSameConnection,   // revision A (F5): the current incarnation, when the message's connection
                     // is the current one (a same-connection replacement); else dropped
};

// Whether a queued Flow re-checks the state's identity before it is written (N5, N6; L11).
enum class FlowRecheck {
  kIdentity,  // N5: dropped if the state is no longer current
  kNone,      // legacy: written anyway, credited to the replacement
};

// What an in-range but inconsistent command does (C5; F4).
enum class InconsistentHandling {
  kCorruptedData,    // C5: settle P, keep the consumer and connection
  kCloseConnection,  // revision C: close the pooled connection
};

// Which skipped message objects are released at skip time (S5, S6; F3).
enum class SkippedRelease {
  kDuplicateOnly,  // S5/S6: dead-letter handling keeps its message alive
  kAll,            // revision B: the dead-letter message is released while still held
};

// One set of rules. Every field is a decision point named after the rule it decides.
//
// Revisions A-C (rulebook section 11) are rev-d with the decisions each got wrong:
//   rev-a  return_scope = kSameConnection (F5). Not modelled as decisions: A's omitted field
//          for P = 1 (F6, allowed by the C1 fallback; not a violation) and its local
//          queue-offer rejection returning 1 (no such path in the model).
//   rev-b  direct_returns = kBesideBudget (F1), finalized_dispatchers = kPersistentSharedOnly
//          (F2), skipped_release = kAll (F3). B's "a failed broker write removes the consumer"
//          is modelled as connection loss (decision 10), as in C and D.
//   rev-c  inconsistent = kCloseConnection (F4).
struct Ruleset {
  RulesetId id;
  std::string_view name;
  std::string_view summary;

  // Broker.
  bool broker_sends_message_permits;      // W3: an upgraded broker always sends the field
  DebitSource consumer_debit;             // B1/B4
  DispatcherCoverage finalized_dispatchers;  // B6

  // Client.
  bool client_reads_message_permits;      // C1 step (1)
  EarlyFailureReturn early_failure;       // C2/C7
  BatchFailureReturn batch_failure;       // C7/K5
  DirectReturns direct_returns;           // K6
  BeforeStartReturn before_start;         // K4
  ReturnScope return_scope;               // M1/N3
  FlowRecheck flow_recheck;               // N5/N6
  InconsistentHandling inconsistent;      // C5
  SkippedRelease skipped_release;         // S5/S6
  bool budget_tracked;                    // K1-K8 hold as a budget (false: legacy counts)
};

// The ruleset with that id.
const Ruleset& ruleset(RulesetId id);

// Every ruleset this build knows, in revision order (legacy first).
std::span<const Ruleset* const> all_rulesets();

// rev-a, rev-b and rev-c: earlier revisions of the proposal that rev-d supersedes. Reports show
// them only when asked (protocol reviewers compare revisions; a client developer needs legacy,
// what clients do today, and rev-d, what the proposal asks).
bool is_draft(RulesetId id);

// The ruleset named `name` ("legacy", "rev-a" .. "rev-d"); InvalidArgument naming the known
// ones otherwise.
absl::StatusOr<const Ruleset*> parse_ruleset(std::string_view name);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_RULESET_H_
