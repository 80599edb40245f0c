// The symbolic CommandMessage: spec/client_command.cc's receive pipeline (C1-C7, K1-K8, S1-S3)
// as one bit-vector formula per ruleset. The ruleset's decision points choose the formula at
// encoding time, so legacy and rev-d (and any later revision) come from this one encoder.
//
// Inputs are a CommandVars: B <= W, the ack_set as a W-bit vector, the message_permits field
// (present, any 64-bit value), the early failure stage, the payload path, and one 3-bit fate per
// index (IndexFate order; the code 7 reads as deliver) held as three W-bit vectors, so the batch
// expansion is a handful of bitwise operations and popcounts instead of a loop over indexes.
//
//   CommandVars v = make_command_vars(ctx, 64, "c");
//   CommandOutcome rev_d = encode_command(spec::ruleset(spec::RulesetId::kRevD), v);
//   q.add(command_domain(v));
//   q.check(rev_d.total != rev_d.p);   // kUnsat: E1 for every command with B <= 64
#ifndef PERMITCHECK_SOLVER_INTERNAL_COMMAND_ENCODING_H_
#define PERMITCHECK_SOLVER_INTERNAL_COMMAND_ENCODING_H_

#include <z3++.h>

#include <cstdint>
#include <string>
#include <vector>

#include "solver/internal/z3_util.h"
#include "spec/client_command.h"
#include "spec/command_budget.h"
#include "spec/ruleset.h"

namespace permitcheck::solver::internal {

// Width of every count (P, sums): P <= 2^31-1 plus B and a few returns never wrap.
inline constexpr unsigned kCountBits = 40;

// Early stage input codes.
inline constexpr unsigned kStageNone = 0, kStageChecksum = 1, kStageMetadata = 2,
                          kStageDecompress = 3;
// Failure codes of a progress: 0 none, 1 + spec::FailureStage.
inline unsigned failure_code(spec::FailureStage stage) { return 1 + static_cast<unsigned>(stage); }

struct CommandVars {
  unsigned width = 0;      // W: bits of ack_set and of each fate vector
  z3::expr batch_size;     // unsigned, bits_for(W) + 1 bits; the domain is [0, W]
  z3::expr batched;        // native batch (else a single message)
  z3::expr field_present;  // message_permits on the wire
  z3::expr field;          // its value, 64 bits, read unsigned
  z3::expr ack_present;    // ack_set present (a present set may be all zero)
  z3::expr ack;            // W bits: bit i = index i deliverable
  z3::expr fate0, fate1, fate2;  // bit i of fateK = bit K of index i's IndexFate code
  z3::expr stage;          // 2 bits: kStage*
  z3::expr path;           // 3 bits: spec::PayloadPath; 6 and 7 read as native
};

// Fresh variables named `prefix`.name. REQUIRES: 8 <= width <= 65535.
CommandVars make_command_vars(z3::context& ctx, unsigned width, const std::string& prefix);

// The input domain: B <= W; a single message has B = 1; chunks are single messages (Pulsar
// never chunks a batch).
z3::expr command_domain(const CommandVars& v);

// The counts of the command's indexes, all from one partition of the deliverable indexes
// below B (D): handed off, skipped, and the rest (hand-off failures and indexes after a
// parse failure). Every other count is a sum of these parts, never a second popcount, so a
// relation such as "handed off + skipped <= P" is plain arithmetic for the solver, not a
// fact about two adder trees (NOTES.md: such facts take Z3 minutes at 64 bits).
struct CommandCounts {
  z3::expr parse_failure;  // a kParseFails index below B
  z3::expr delivered;      // D below the first parse failure, fate deliver
  z3::expr skipped;        // ... fate duplicate, compacted, before start, dead letter
  z3::expr rest;           // the other indexes of D
  z3::expr beyond;         // ack_set bits at or beyond B
  z3::expr in_b;           // |D|: bits of ack_set below B, or B when ack_set is absent
};
CommandCounts command_counts(const CommandVars& v,
                             PopcountEncoding pc = PopcountEncoding::kAdderTree);

// B2/B3: the broker's candidate P of the entry (B <= 0 -> 0; ack_set absent -> B; else the
// bits below B), kCountBits wide.
z3::expr candidate(const CommandVars& v, PopcountEncoding pc = PopcountEncoding::kAdderTree);

// A symbolic spec::CommandProgress (kCountBits wide, signed where the spec's int64 is).
struct SymProgress {
  z3::expr p;
  z3::expr batch_size;
  z3::expr claimed;
  z3::expr skipped;
  z3::expr direct;
  z3::expr failure;      // 3 bits: 0 none, else failure_code()
  z3::expr transferred;  // bool
};

// spec::settle_amount, symbolically: the rules pick the formula, the progress is symbolic.
z3::expr encode_settle_amount(const spec::Ruleset& rules, const SymProgress& progress);

// What handle_command does with the command under one ruleset.
struct CommandOutcome {
  z3::expr p;                // the P the client resolved (C1-C3), the command's budget
  z3::expr protocol_error;   // C4 (or a ruleset closing the connection): nothing returned
  z3::expr early_failure;    // checksum or metadata failure: settled before metadata
  z3::expr inconsistent;     // after metadata, validation gave C5
  z3::expr decompress;       // failed at decompression
  z3::expr path_reached;     // validated: the payload path runs
  z3::expr specialised;      // chunk non-final, crypto DISCARD or FAIL
  z3::expr single_run;       // native single message
  z3::expr batch_run;        // native batch expansion
  z3::expr parse_failure;    // a kParseFails index below B (batch)
  z3::expr claimed;          // messages handed off (each returns 1 later, M1)
  z3::expr skipped;
  z3::expr direct;           // direct returns (K6)
  z3::expr settle;           // the terminal transition (K5)
  z3::expr total;            // everything the command returns: 0 on a protocol error
  z3::expr failure;          // progress failure code
  z3::expr transferred;      // S1
};

// The receive pipeline stage by stage (Handler::run), one formula for encode_command and for
// the summary encoding (summary.h): given C4 (`pe_c4`: a present field out of range), the
// validation's C5 verdict, the 2-bit stage (kStage*), the 3-bit payload path and whether the
// command is a native batch, which stage the command ends in, and the P it settles by (the
// early P before metadata, `v_p` after).
struct StagePredicates {
  z3::expr early_fail;         // checksum or metadata failure (C7)
  z3::expr after_meta;         // metadata read
  z3::expr inconsistent;       // C5 after metadata
  z3::expr pe_inconsistent;    // ... and the ruleset closes the connection for it
  z3::expr fail_inconsistent;  // ... and the ruleset fails the command for it
  z3::expr valid;              // validated
  z3::expr decompress;         // failed at decompression
  z3::expr path_reached;       // the payload path runs
  z3::expr chunk;              // non-final chunk (S2)
  z3::expr crypto_discard;     // crypto DISCARD (S3)
  z3::expr crypto_fail;        // crypto FAIL
  z3::expr specialised;        // one of the three
  z3::expr native;             // a native single message or batch
  z3::expr batch_run;          // native batch expansion
  z3::expr single_run;         // native single message
  z3::expr p;                  // the P the command settles by
  bool closes;                 // the ruleset closes the connection on C5 (revision C: on K8 too)
};
StagePredicates stage_predicates(const spec::Ruleset& rules, const z3::expr& pe_c4,
                                 const z3::expr& v_inconsistent, const z3::expr& stage,
                                 const z3::expr& path, const z3::expr& batched,
                                 const z3::expr& early_p, const z3::expr& v_p);

CommandOutcome encode_command(const spec::Ruleset& rules, const CommandVars& v,
                              PopcountEncoding pc = PopcountEncoding::kAdderTree);

// The concrete command a model describes (ids as in the legacy catalogue: inc 1, cmd 1, c1).
spec::CommandSituation situation_from(const z3::model& m, const CommandVars& v);

// Equalities fixing `v` to a concrete situation. REQUIRES: the situation fits v's width
// (B <= W, ack_set bits below W, at most W fates).
std::vector<z3::expr> fix_command(const CommandVars& v, const spec::CommandSituation& s);

// "B=8 (batch), message_permits=8, ack_set absent, checksum fails" for a situation.
std::string describe_situation(const spec::CommandSituation& s);

}  // namespace permitcheck::solver::internal

#endif  // PERMITCHECK_SOLVER_INTERNAL_COMMAND_ENCODING_H_
