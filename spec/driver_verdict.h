// Verdicts from what a run's driver knows beside the trace: the properties harness injects
// faults, follows chunks and redeliveries and settles the world, so it can say what the trace
// alone cannot (a hand-off that failed where none was injected, a backlog nothing dispatches).
// The driver gathers those facts; the rules are decided here, one function each, and each
// returns the finding (line 0: the driver places it) or nullopt when the rule holds.
//
//   if (std::optional<Finding> f = restored_handoff_verdict(7, /*index=*/2, /*fails_at=*/-1)) {
//     report(*f);  // K2: "the hand-off of index 2 of command 7 failed and was restored, ..."
//   }
//
// Guarantees: pure functions of their arguments; O(1) apart from the text.
#ifndef PERMITCHECK_SPEC_DRIVER_VERDICT_H_
#define PERMITCHECK_SPEC_DRIVER_VERDICT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "spec/monitor.h"

namespace permitcheck::spec {

// ---- what the run was given (faults, redeliveries, chunks) ----

// S5: a message goes to dead-letter handling when its redelivery count (the commands that
// carried its entry before this one) is past maxRedeliverCount, and only then.
std::optional<Finding> dead_letter_verdict(std::uint64_t cmd, int redelivery_count,
                                           int max_redeliver_count, bool dead_lettered);

// K2: a hand-off fails only where the run injected a failure (`fails_at`, -1: nowhere); a unit
// restored at another index is a message the application never gets.
std::optional<Finding> restored_handoff_verdict(std::uint64_t cmd, std::int64_t index,
                                                std::int64_t fails_at);

// S2: an in-order chunk returns 1 (non-final) or is delivered (final); one that settled 0 and
// made no progress took X4's branch for duplicate or out-of-order chunks.
struct ChunkSettle {
  std::uint64_t cmd = 0;
  int chunk_id = 0, num_chunks = 0;
  bool in_order = false;   // its id is the one its message's context expects
  std::int64_t settled = 0;
  bool progressed = false;  // a claim, skip or direct return of the command was recorded
};
std::optional<Finding> in_order_chunk_verdict(const ChunkSettle& c);

// ---- the settled (quiescent) world ----

// E6: entries still pending at a live broker consumer whose client consumed and acknowledged
// everything it was sent are never completed or redelivered while it lives. REQUIRES: the
// client holds nothing back on purpose (X3, X4, an unacknowledged message, open chunks).
std::optional<Finding> undrained_verdict(std::int64_t pending, const std::string& inc,
                                         std::uint64_t consumer);

// B13 (Key_Shared): with every consumer's permits positive and no key held back (one consumer,
// or nothing pending at any), a backlog is an entry nothing will dispatch. `never_sent`: the
// published entries no send ever carried (0: the broker's own backlog).
struct KeySharedBacklog {
  bool every_consumer_has_permits = false;
  std::size_t live_consumers = 0;
  bool none_pending = false;
  std::size_t never_sent = 0;
};
std::optional<Finding> key_shared_backlog_verdict(const KeySharedBacklog& b);

// B13 (other dispatchers): backlog while broker consumer `inc` has permits, nothing dispatched.
std::optional<Finding> backlog_verdict(std::int64_t available, const std::string& inc);

// S7: a consumer that closed itself does not subscribe again.
std::optional<Finding> resubscribed_after_close_verdict(bool closed_itself, std::uint64_t consumer,
                                                        std::uint64_t old_inc,
                                                        const std::string& new_inc);

// N5: after the initial grant, a Flow drains an accumulator that reached T, so it carries at
// least T. Not for a zero-queue consumer (a receive() grants 1).
std::optional<Finding> flow_below_threshold_verdict(std::int64_t permits, std::uint64_t inc,
                                                    std::int64_t t, bool after_initial_grant,
                                                    bool zero_queue);

// N4 (zero queue): a receive()'s Flow 1 only while the consumer's latest incarnation is live and
// Flow-enabled.
std::optional<Finding> zero_queue_flow_verdict(bool flow_enabled_incarnation,
                                               std::uint64_t consumer, std::int64_t permits,
                                               const std::string& cnx);

// K5: when the connection ends, every command received on it made its terminal transition.
// `unsettled`: one that did not (nullopt: none).
std::optional<Finding> unsettled_at_disconnect_verdict(std::optional<std::uint64_t> unsettled);

// E6: a consumer (not closed by itself, S7) with no live Flow-enabled incarnation at
// quiescence is stalled.
enum class StallCause { kNone, kNeverSubscribed, kEndedWithoutReplacement, kNeverFlowEnabled };
std::optional<Finding> stalled_verdict(StallCause cause, int consumer, std::uint64_t inc);

// N4: the initial grant of Q is written as soon as the state is Flow-enabled (rulebook 12.5).
// Not for a zero-queue consumer nor Q = 0.
std::optional<Finding> initial_grant_verdict(bool wrote_a_flow, bool zero_queue, int consumer,
                                             std::uint64_t inc, std::int64_t q);

// E5 (zero queue): at quiescence a live broker consumer of a zero-queue client holds at most 1
// permit (one receive() waiting); more is a permit invented.
std::optional<Finding> zero_queue_available_verdict(std::int64_t available,
                                                    const std::string& inc,
                                                    std::uint64_t consumer);

// C5: an inconsistent command is acknowledged with a validation error while its connection is
// open. Called for one that was not, on connection `cnx`.
Finding unacknowledged_inconsistent_finding(std::uint64_t cmd, const std::string& cnx);

// B7: settled, every command a send finalized was written to its consumer. `unwritten`: one that
// was not (nullopt: none).
std::optional<Finding> unwritten_command_verdict(std::optional<std::uint64_t> unwritten);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_DRIVER_VERDICT_H_
