// Broker finalization: how one send of entries becomes commands and debits (rules B1-B8, E4).
//
// The broker computes a candidate P per entry (B2), runs pending-ack admission, and only then
// finalizes P (B1). The finalized values alone feed the consumer debit (B4), the unacked count
// (B5), the dispatcher aggregate (B6) and the serialized field (B7). The legacy ruleset debits
// the pre-admission sum instead, which is bug L8.
//
//   std::vector<SendEntry> send = {{.batch_size = 10, .admitted = true},
//                                  {.batch_size = 10, .admitted = false}};
//   SendResult r = finalize_permits(rev_d, DispatcherKind::kPersistentShared, send);
//   // r.consumer_debit == 10, r.dispatcher_debit == 10, one command with P = 10.
#ifndef PERMITCHECK_SPEC_FINALIZE_H_
#define PERMITCHECK_SPEC_FINALIZE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spec/ack_set.h"
#include "spec/ruleset.h"
#include "spec/vocabulary.h"  // kMaxPermits, DispatcherKind

namespace permitcheck::spec {

// Whether the dispatcher keeps a totalAvailablePermits aggregate (B6).
bool has_aggregate(DispatcherKind kind);

// Whether the dispatcher is a sticky-key (Key_Shared) one, whose send loop is its own (F2).
bool is_sticky_key(DispatcherKind kind);

// Whether the subscription acknowledges individually, so unacked counts rise (B5).
bool acks_individually(DispatcherKind kind);

// One entry of a send, as the dispatcher read it.
struct SendEntry {
  std::int64_t batch_size = 1;  // B from the entry's metadata
  AckSet ack_set;               // absent for a complete batch
  bool admitted = true;         // pending-ack admission accepted it (B1)
};

// One finalized command: an admitted entry with candidate P >= 1.
struct FinalizedCommand {
  std::size_t entry;                            // index into the send
  std::int64_t p;                               // finalized P (B8: 1..2^31-1, <= B)
  std::optional<std::uint32_t> message_permits;  // serialized field (B7; absent for old brokers)
};

// B8: where a send stopped because a checked value would leave 1..2^31-1.
struct SendOverflow {
  std::size_t entry = 0;  // index of the entry whose P would overflow; it and later ones: nothing
  std::string reason;  // "B8: finalized sum 2147483647 + 1 of the entry at index 1 overflows ..."
};

// What one send does to the broker's accounting.
struct SendResult {
  std::vector<FinalizedCommand> commands;     // in entry order
  std::int64_t consumer_debit = 0;            // B4
  std::optional<std::int64_t> dispatcher_debit;  // B6; nullopt for single-active dispatchers
  std::int64_t unacked_increase = 0;          // B5
  std::int64_t finalized_sum = 0;             // sum of P over commands
  std::optional<SendOverflow> overflow;       // B8: the send stopped at this entry
};

// B2: the candidate P of one entry. ack_set absent -> B; present -> bits set in [0, B).
// A batch_size <= 0 yields 0 (nothing deliverable, B3).
std::int64_t candidate_permits(std::int64_t batch_size, const AckSet& ack_set);

// B1-B8: finalizes one send under `rules`. Rejected entries and entries with candidate 0 make
// no command (B1, B3). Each entry's finalization is atomic (B8, rulebook section 12 item 11):
// the first entry whose P exceeds 2^31-1, or whose P would take a checked sum past 2^31-1,
// stops the send (`overflow`); it and every later entry make no command and no debit, while
// the entries before it stay finalized, sent and debited. The sums checked are the finalized
// sum and, when the ruleset debits it (legacy, revision B's sticky-key aggregates), the
// pre-admission sum. Linear in the entries and their ack_set words.
SendResult finalize_permits(const Ruleset& rules, DispatcherKind dispatcher,
                            std::span<const SendEntry> entries);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_FINALIZE_H_
