// The symbolic send (check 2): spec::finalize_permits for k <= kmax entries as a formula, per
// dispatcher kind, with the ruleset's decision points (consumer_debit, finalized_dispatchers,
// broker_sends_message_permits) chosen at encoding time.
//
//   SendVars v = make_send_vars(ctx, /*kmax=*/4, /*ack_bits=*/64);
//   SendOutcome o = encode_send(rules, DispatcherKind::kPersistentKeyShared, v);
//   q.check(!o.ok);   // kUnsat under rev-d: E4 for every send of at most 4 entries
#ifndef PERMITCHECK_SOLVER_INTERNAL_FINALIZATION_H_
#define PERMITCHECK_SOLVER_INTERNAL_FINALIZATION_H_

#include <z3++.h>

#include <vector>

#include "solver/internal/z3_util.h"
#include "spec/finalize.h"
#include "spec/ruleset.h"

namespace permitcheck::solver::internal {

// Width of the send's sums: kmax candidates of up to 2^63 never wrap.
inline constexpr unsigned kSumBits = 72;

struct EntryVars {
  z3::expr batch_size;   // 64 bits, signed (the spec's int64)
  z3::expr ack_present;
  z3::expr ack;          // ack_bits bits
  z3::expr admitted;
  z3::expr abstract_candidate;  // kSumBits: the candidate when candidates are abstracted
};

struct SendVars {
  unsigned kmax = 0;
  unsigned ack_bits = 0;
  z3::expr k;            // number of entries, 1..kmax
  std::vector<EntryVars> entries;  // kmax slots; slot i is used when i < k
};

SendVars make_send_vars(z3::context& ctx, unsigned kmax, unsigned ack_bits);
z3::expr send_domain(const SendVars& v);
z3::expr used(const SendVars& v, unsigned i);

struct SendOutcome {
  std::vector<z3::expr> candidate;   // B2 per slot (kSumBits)
  std::vector<z3::expr> finalized;   // slot i became a command (B1, B3)
  z3::expr finalized_sum;            // ΣP over commands
  z3::expr pre_admission_sum;        // over every used entry
  z3::expr error;                    // B8 overflow: the send stopped at an entry, earlier stay
  z3::expr consumer_debit;           // B4
  z3::expr dispatcher_debit;         // B6 (0 without an aggregate)
  z3::expr unacked;                  // B5
  z3::expr serialized_sum;           // B7: Σ message_permits written
  // The properties (rules B1-B8, E4): each true when it holds.
  z3::expr consumer_ok;              // B4
  z3::expr dispatcher_ok;            // B6
  z3::expr unacked_ok;               // B5
  z3::expr serialized_ok;            // B7
  std::vector<z3::expr> entry_range_ok;  // B2/B8 per slot: its P in 1..min(B, 2^31-1)
  z3::expr range_ok;                 // all slots
  z3::expr bounded_ok;               // B8: every debit stays within 2^31-1
  z3::expr debits_ok;                // all but range_ok (which is the same for every kind)
  z3::expr ok;                       // all of them (E4)
};

// With `abstract_candidates`, each entry's candidate P is its free abstract_candidate (any value
// up to 2^63-1) instead of B2's function of B and ack_set: the debit properties hold for every
// candidate value, so proving them abstractly proves them for every B and ack_set at once.
SendOutcome encode_send(const spec::Ruleset& rules, spec::DispatcherKind kind, const SendVars& v,
                        PopcountEncoding pc = PopcountEncoding::kAdderTree,
                        bool abstract_candidates = false);

// The concrete entries a model describes (used slots only).
std::vector<spec::SendEntry> entries_from(const z3::model& m, const SendVars& v);

// Equalities fixing `v` to `entries`. REQUIRES: 1 <= entries.size() <= kmax, ack bits < ack_bits.
std::vector<z3::expr> fix_send(const SendVars& v, const std::vector<spec::SendEntry>& entries);

}  // namespace permitcheck::solver::internal

#endif  // PERMITCHECK_SOLVER_INTERNAL_FINALIZATION_H_
