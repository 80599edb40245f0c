// The command budget (rules K1-K8, S1): the units of one CommandMessage while the client
// processes it.
//
// The command owns all P units (K1). Each hand-off claims one (K2); a skip claims nothing (K4);
// a direct return takes its units out atomically (K6); exactly one terminal transition returns
// what is left (K5) and every later one returns 0. After an ownership transfer to a specialised
// path the budget returns nothing (S1). It never returns more than P (K7) and never hands off
// more than P messages (K8).
//
//   CommandBudget b(/*p=*/3);
//   b.claim(); b.claim();          // two messages handed off
//   int64_t n = b.finish();        // n == 1: the command settles the rest
//
// Each decision is one function of a CommandProgress: command_owned (K5/K6), hand_off_room (K8),
// specialised_return (S2/S3) and settle_amount (K5 under any ruleset, legacy included).
// handle_command runs on a CommandBudget and the monitor calls the same functions on what it
// saw, so the model and the oracle cannot disagree about a formula.
#ifndef PERMITCHECK_SPEC_COMMAND_BUDGET_H_
#define PERMITCHECK_SPEC_COMMAND_BUDGET_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "spec/ruleset.h"

namespace permitcheck::spec {

// Where payload processing failed (C7, C5), in pipeline order.
enum class FailureStage { kChecksum, kMetadata, kDecompress, kBatch, kInconsistent };

std::string_view failure_stage_name(FailureStage stage);  // "checksum", ...
std::optional<FailureStage> parse_failure_stage(std::string_view name);

// Whether the stage fails before any message can be handed off (C2/C7; L1-L3).
bool is_early_failure(FailureStage stage);

// Why units went straight back from a command: direct_return's `path` (events.h, ReturnPath).
enum class DirectPath {
  kChunk,       // "chunk": a non-final chunk (S2)
  kCrypto,      // "crypto": a crypto DISCARD (S3)
  kDuplicate,   // "duplicate": Pulsar's early return of a single duplicate (K6)
  kDeadLetter,  // "dead_letter": the same for a dead-letter message (K6)
  kOther,       // any other text; the trace format carries it through unchanged
};

// What a command has done with its units so far: what the client model (handle_command, through
// CommandBudget) and the monitor both record, and what the decisions below read.
struct CommandProgress {
  std::int64_t p = 0;                 // resolved P (budget rulesets)
  std::int64_t batch_size = 1;        // B if known, else 1
  std::int64_t claimed = 0;           // hand-offs net of restores
  std::int64_t skipped = 0;           // skipped deliverable indexes (K4)
  std::int64_t direct_returned = 0;   // direct returns by the command (K6)
  std::optional<FailureStage> failure;
  bool transferred = false;           // S1
};

// K5/K6: the units still owned by the command: P less its hand-offs, less its direct returns
// where they come out of the budget (K6); never negative. Ownership transfer (S1) is settled by
// settle_amount, not here.
std::int64_t command_owned(const Ruleset& rules, const CommandProgress& progress);

// K8: how many more messages the command may hand off before it hands off more than P (direct
// returns count, whatever the ruleset). Zero or less: the next hand-off is malformed (C5).
std::int64_t hand_off_room(const CommandProgress& progress);

// S2/S3: what a specialised path returns straight from the command: a non-final chunk 1 (S2),
// a crypto DISCARD B (S3). Nullopt for a path without a prescribed return.
std::optional<std::int64_t> specialised_return(DirectPath path, std::int64_t batch_size);

// One command's units while the client processes it, as handle_command runs it. Every
// decision comes from the functions above and settle_amount, so the client model and the
// monitor decide alike.
class CommandBudget {
 public:
  // K1 under revision D. REQUIRES: 0 <= p <= kMaxPermits.
  explicit CommandBudget(std::int64_t p);
  // K1 under `rules` (which must outlive the budget).
  CommandBudget(const Ruleset& rules, std::int64_t p);

  // C1/C2: P resolved again (after metadata), before any hand-off.
  void resolve(std::int64_t p) { progress_.p = p; }
  void set_batch_size(std::int64_t b) { progress_.batch_size = b; }

  // K2/K8: one unit moves to a message about to enter its lifecycle. FailedPrecondition when
  // no unit is left under a budget ruleset (K8: one more than P is malformed), after finish()
  // (K5) or after transfer() (S1).
  absl::Status claim();

  // K2: a failed hand-off gives its unit back. FailedPrecondition without an unrestored claim.
  absl::Status restore();

  // K4: a deliverable index skipped; its unit stays command-owned.
  void skip() { ++progress_.skipped; }

  // K6: n units returned straight from the command. FailedPrecondition when fewer than n are
  // command-owned (they would be returned twice), after finish() or after transfer().
  absl::Status take_direct(std::int64_t n);

  // A direct return the ruleset makes beside or instead of the budget (S2/S3 after a transfer,
  // legacy early returns): recorded, not limited.
  void record_direct(std::int64_t n) { progress_.direct_returned += n; }

  // C7/C5: payload processing failed at `stage`.
  void fail(FailureStage stage) { progress_.failure = stage; }

  // S1: ownership of the remaining units moves to a specialised path.
  void transfer() { progress_.transferred = true; }

  // K5: the first call returns settle_amount (every unit still command-owned under a budget
  // ruleset; 0 after transfer()); later calls return 0.
  std::int64_t finish();

  const CommandProgress& progress() const { return progress_; }
  std::int64_t p() const { return progress_.p; }
  std::int64_t remaining() const;  // command-owned now (0 after the terminal transition)
  std::int64_t claimed() const { return progress_.claimed; }
  std::int64_t returned() const { return progress_.direct_returned + settled_; }
  bool terminal() const { return terminal_; }
  bool transferred() const { return progress_.transferred; }

 private:
  const Ruleset* rules_;
  CommandProgress progress_;
  std::int64_t settled_ = 0;  // what the terminal transition returned
  bool terminal_ = false;
};

// K5 under `rules`: what the command's terminal transition returns. Budget rulesets return the
// units still command-owned (direct returns excluded only under K6); legacy returns 1 for an
// early failure, the skipped messages of a batch, plus 1 for a batch failure.
std::int64_t settle_amount(const Ruleset& rules, const CommandProgress& progress);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_COMMAND_BUDGET_H_
