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
// settle_amount() gives the terminal return of any ruleset (legacy included) from the counts
// a monitor sees; under a budget-tracking ruleset it agrees with CommandBudget::finish().
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

class CommandBudget {
 public:
  // K1. REQUIRES: 0 <= p <= kMaxPermits.
  explicit CommandBudget(std::int64_t p);

  // K2/K8: one unit moves to a message about to enter its lifecycle. FailedPrecondition when
  // no unit is left (K8: one more than P is malformed), after finish() (K5) or after
  // transfer() (S1).
  absl::Status claim();

  // K2: a failed hand-off gives its unit back. FailedPrecondition without an unrestored claim.
  absl::Status restore();

  // K6: n units returned straight from the command. FailedPrecondition when fewer than n are
  // command-owned (they would be returned twice), after finish() or after transfer().
  absl::Status take_direct(std::int64_t n);

  // S1: ownership of the remaining units moves to a specialised path.
  void transfer() { transferred_ = true; }

  // K5: the first call returns every unit still command-owned (0 after transfer()) and leaves
  // 0; later calls return 0.
  std::int64_t finish();

  std::int64_t p() const { return p_; }
  std::int64_t remaining() const { return remaining_; }
  std::int64_t claimed() const { return claimed_; }
  std::int64_t returned() const { return returned_; }  // direct + terminal, by the command
  bool terminal() const { return terminal_; }
  bool transferred() const { return transferred_; }

 private:
  std::int64_t p_;
  std::int64_t remaining_;
  std::int64_t claimed_ = 0;
  std::int64_t returned_ = 0;
  bool terminal_ = false;
  bool transferred_ = false;
};

// What a monitor has seen of one command when its terminal transition happens.
struct CommandProgress {
  std::int64_t p = 0;                 // resolved P (budget rulesets)
  std::int64_t batch_size = 1;        // B if known, else 1
  std::int64_t claimed = 0;           // hand-offs net of restores
  std::int64_t skipped = 0;           // skipped deliverable indexes (K4)
  std::int64_t direct_returned = 0;   // direct returns by the command (K6)
  std::optional<FailureStage> failure;
  bool transferred = false;           // S1
};

// K5 under `rules`: what the command's terminal transition returns. Budget rulesets return the
// units still command-owned (direct returns excluded only under K6); legacy returns 1 for an
// early failure, the skipped messages of a batch, plus 1 for a batch failure.
std::int64_t settle_amount(const Ruleset& rules, const CommandProgress& progress);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_COMMAND_BUDGET_H_
