// The command summary: what one CommandMessage does (C1-C7, K1-K8, S1-S3), as linear arithmetic
// over a handful of counts instead of bit-vectors over every index. It is the abstraction behind
// the proofs for every parameter (solver/NOTES.md, "Proofs for every parameter").
//
// A command is summarized by B, the message_permits field, whether an ack_set is present, how
// many deliverable indexes below B are handed off, skipped and neither (hand-off failures and
// indexes after a parse failure), how many ack_set bits lie at or beyond B, whether a batch
// parse failure happens, the early stage, the payload path and index 0's fate (a single message).
// The formulas are those of command_encoding.cc, written once over a `Num` that is either
// Z3 integers (B and P up to 2^31-1, the field any 64-bit value: every parameter) or the bit-level
// encoding's own 40-bit counts (to prove that the bit-level encoding refines the summary).
//
//   SummaryVars s = make_summary_vars(ctx, "c");              // integers
//   SummaryOutcome o = encode_summary(rules, s);
//   q.add(summary_domain(s));
//   q.check(o.total != o.p);   // unsat under rev-d: E1 for every B and P (with the refinement)
#ifndef PERMITCHECK_SOLVER_INTERNAL_SUMMARY_H_
#define PERMITCHECK_SOLVER_INTERNAL_SUMMARY_H_

#include <z3++.h>

#include <optional>
#include <string>

#include "solver/internal/command_encoding.h"
#include "spec/client_command.h"
#include "spec/ruleset.h"

namespace permitcheck::solver::internal {

struct SummaryVars {
  bool integers = true;    // counts are Z3 Int; else 40-bit vectors (kCountBits)
  z3::expr batch_size;     // B
  z3::expr batched;
  z3::expr field_present;
  z3::expr field_in_range;  // 1 <= field <= 2^31-1
  z3::expr field_value;     // the field as a count, meaningful when in range
  z3::expr field;           // integers only: the field, 0 .. 2^64-1
  z3::expr ack_present;
  z3::expr delivered;       // deliverable, below B, before any parse failure, fate deliver
  z3::expr skipped;         // ... fate duplicate, compacted, before start or dead letter
  z3::expr rest;            // the other deliverable indexes below B
  z3::expr beyond;          // ack_set bits at or beyond B (X6)
  z3::expr parse_failure;   // a batch parse failure at an index below B
  z3::expr dead_letter;     // some skipped index of the batch is a dead letter (S5)
  z3::expr stage;           // 2 bits, kStage*
  z3::expr path;            // 3 bits, spec::PayloadPath (6, 7 read as native)
  z3::expr fate;            // 3 bits, index 0's IndexFate (7 reads as deliver)
};

// Integer summary variables named `prefix`.name.
SummaryVars make_summary_vars(z3::context& ctx, const std::string& prefix);

// The summary of a bit-level command: its counts, as command_encoding.cc computes them.
SummaryVars summary_of(const CommandVars& v, PopcountEncoding pc = PopcountEncoding::kAdderTree);

// What every command's counts satisfy (the premises of the summary): counts >= 0, handed off +
// skipped + rest = |D| <= B, |D| = B when ack_set is absent, a parse failure needs B >= 1 and,
// when every index below B is deliverable, leaves at least one index (itself) in `rest`; a
// dead letter among the skipped needs one skipped; a single message has B = 1; a chunk is a
// single message. For integers also 0 <= B <= 2^31-1 and 0 <= field <= 2^64-1. Without
// `cardinality`, the two facts about |D| (|D| <= B; |D| = B without an ack_set) are left out.
z3::expr summary_domain(const SummaryVars& s, bool cardinality = true);

struct SummaryOutcome {
  z3::expr p;               // the resolved P (C1-C3)
  z3::expr protocol_error;  // C4, or a ruleset closing the connection
  z3::expr early_failure, inconsistent, decompress, path_reached, specialised;
  z3::expr single_run, batch_run;
  z3::expr claimed, direct, settle, total;  // 0 on a protocol error
  z3::expr transferred;
};

SummaryOutcome encode_summary(const spec::Ruleset& rules, const SummaryVars& s);

// A concrete command with the counts of an integer model (indexes laid out in order: handed
// off, skipped, the parse failure, the rest; bits beyond B after B). nullopt when B is larger
// than `max_b` (too large to write out) or the counts cannot be laid out.
std::optional<spec::CommandSituation> situation_from_summary(const z3::model& m,
                                                             const SummaryVars& s,
                                                             std::int64_t max_b = 4096);

}  // namespace permitcheck::solver::internal

#endif  // PERMITCHECK_SOLVER_INTERNAL_SUMMARY_H_
