#include "spec/command_budget.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "spec/plain_text.h"

namespace permitcheck::spec {
namespace {

constexpr std::array kAllStages = {FailureStage::kChecksum, FailureStage::kMetadata,
                                   FailureStage::kDecompress, FailureStage::kBatch,
                                   FailureStage::kInconsistent};

}  // namespace

std::string_view failure_stage_name(FailureStage stage) {
  switch (stage) {
    case FailureStage::kChecksum:
      return "checksum";
    case FailureStage::kMetadata:
      return "metadata";
    case FailureStage::kDecompress:
      return "decompress";
    case FailureStage::kBatch:
      return "batch";
    case FailureStage::kInconsistent:
      return "inconsistent";
  }
  return "inconsistent";
}

std::optional<FailureStage> parse_failure_stage(std::string_view name) {
  for (FailureStage stage : kAllStages) {
    if (failure_stage_name(stage) == name) return stage;
  }
  return std::nullopt;
}

// Decompression fails before any hand-off too: B is known there, but nothing was claimed.
bool is_early_failure(FailureStage stage) {
  return stage == FailureStage::kChecksum || stage == FailureStage::kMetadata ||
         stage == FailureStage::kDecompress;
}

std::int64_t command_owned(const Ruleset& rules, const CommandProgress& progress) {
  std::int64_t owned = progress.p - progress.claimed;
  if (rules.direct_returns == DirectReturns::kFromBudget) owned -= progress.direct_returned;  // K6
  return std::max<std::int64_t>(0, owned);
}

std::int64_t hand_off_room(const CommandProgress& progress) {
  return progress.p - progress.claimed - progress.direct_returned;
}

std::optional<std::int64_t> specialised_return(DirectPath path, std::int64_t batch_size) {
  switch (path) {
    case DirectPath::kChunk:
      return 1;  // S2: each non-final chunk returns 1
    case DirectPath::kCrypto:
      return batch_size;  // S3: a crypto DISCARD returns B
    case DirectPath::kDuplicate:
    case DirectPath::kDeadLetter:
    case DirectPath::kOther:
      return std::nullopt;
  }
  return std::nullopt;
}

CommandBudget::CommandBudget(std::int64_t p) : CommandBudget(ruleset(RulesetId::kRevD), p) {}

CommandBudget::CommandBudget(const Ruleset& rules, std::int64_t p) : rules_(&rules) {
  progress_.p = p;
}

std::int64_t CommandBudget::remaining() const {
  return terminal_ ? 0 : command_owned(*rules_, progress_);
}

absl::Status CommandBudget::claim() {
  if (terminal_) return absl::FailedPreconditionError("K5: claim after the terminal transition");
  if (progress_.transferred) {
    return absl::FailedPreconditionError("S1: claim after ownership transfer");
  }
  if (rules_->budget_tracked && hand_off_room(progress_) < 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "K8: hand-off ", progress_.claimed + 1, " with no permit left (P = ", progress_.p, ", ",
        progress_.claimed, " claimed, ", progress_.direct_returned, " returned)"));
  }
  ++progress_.claimed;
  return absl::OkStatus();
}

absl::Status CommandBudget::restore() {
  // A unit restored after the terminal transition or a transfer would never be returned.
  if (terminal_) return absl::FailedPreconditionError("K5: restore after the terminal transition");
  if (progress_.transferred) {
    return absl::FailedPreconditionError("S1: restore after ownership transfer");
  }
  if (progress_.claimed < 1) {
    return absl::FailedPreconditionError("K2: restore without an unrestored claim");
  }
  --progress_.claimed;
  return absl::OkStatus();
}

absl::Status CommandBudget::take_direct(std::int64_t n) {
  if (terminal_) {
    return absl::FailedPreconditionError(
        absl::StrCat("K5: direct return of ", n, " after the terminal transition"));
  }
  if (progress_.transferred) {
    return absl::FailedPreconditionError(
        absl::StrCat("S1: direct return of ", n, " after ownership transfer"));
  }
  if (n < 0) return absl::InvalidArgumentError(absl::StrCat("K6: negative direct return ", n));
  const std::int64_t owned = command_owned(*rules_, progress_);
  if (n > owned) {
    return absl::FailedPreconditionError(absl::StrCat(
        "K6: direct return of ", n, " but the command holds only ", count_noun(owned, "permit"),
        " (P = ", progress_.p, "); the excess would be returned twice"));
  }
  progress_.direct_returned += n;
  return absl::OkStatus();
}

std::int64_t CommandBudget::finish() {
  if (terminal_) return 0;  // K5: a later terminal transition returns nothing
  terminal_ = true;
  settled_ = settle_amount(*rules_, progress_);
  return settled_;
}

std::int64_t settle_amount(const Ruleset& rules, const CommandProgress& progress) {
  if (progress.transferred) return 0;  // S1: the specialised path owns the units
  const bool early = progress.failure.has_value() && is_early_failure(*progress.failure);
  if (early && rules.early_failure == EarlyFailureReturn::kOne) return 1;  // L1-L3

  if (rules.budget_tracked) return command_owned(rules, progress);  // K5

  // No budget (legacy counts).
  switch (rules.batch_failure) {
    case BatchFailureReturn::kRemainingBudget:
      return std::max<std::int64_t>(0, hand_off_room(progress));
    case BatchFailureReturn::kSkippedPlusOne: {
      // Skipped messages of a batch come back here; a non-batched skip returns directly or
      // not at all (L9).
      const std::int64_t skipped = progress.batch_size > 1 ? progress.skipped : 0;
      const bool batch_failure = progress.failure == FailureStage::kBatch ||
                                 progress.failure == FailureStage::kInconsistent;
      return skipped + (batch_failure ? 1 : 0);  // L4, L5
    }
  }
  return 0;
}

}  // namespace permitcheck::spec
