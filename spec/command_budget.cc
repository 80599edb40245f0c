#include "spec/command_budget.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"

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

CommandBudget::CommandBudget(std::int64_t p) : p_(p), remaining_(p) {}

absl::Status CommandBudget::claim() {
  if (terminal_) return absl::FailedPreconditionError("K5: claim after the terminal transition");
  if (transferred_) return absl::FailedPreconditionError("S1: claim after ownership transfer");
  if (remaining_ < 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("K8: hand-off ", claimed_ + 1, " with no unit left (P = ", p_, ", ",
                     claimed_, " claimed, ", returned_, " returned)"));
  }
  --remaining_;
  ++claimed_;
  return absl::OkStatus();
}

absl::Status CommandBudget::restore() {
  // A unit restored after the terminal transition or a transfer would never be returned.
  if (terminal_) return absl::FailedPreconditionError("K5: restore after the terminal transition");
  if (transferred_) return absl::FailedPreconditionError("S1: restore after ownership transfer");
  if (claimed_ < 1) {
    return absl::FailedPreconditionError("K2: restore without an unrestored claim");
  }
  ++remaining_;
  --claimed_;
  return absl::OkStatus();
}

absl::Status CommandBudget::take_direct(std::int64_t n) {
  if (terminal_) {
    return absl::FailedPreconditionError(
        absl::StrCat("K5: direct return of ", n, " after the terminal transition"));
  }
  if (transferred_) {
    return absl::FailedPreconditionError(
        absl::StrCat("S1: direct return of ", n, " after ownership transfer"));
  }
  if (n < 0) return absl::InvalidArgumentError(absl::StrCat("K6: negative direct return ", n));
  if (n > remaining_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "K6: direct return of ", n, " but only ", remaining_, " units are command-owned (P = ",
        p_, "); the excess would be returned twice"));
  }
  remaining_ -= n;
  returned_ += n;
  return absl::OkStatus();
}

std::int64_t CommandBudget::finish() {
  if (terminal_) return 0;  // K5: a later terminal transition returns nothing
  terminal_ = true;
  const std::int64_t n = transferred_ ? 0 : remaining_;  // S1
  remaining_ = 0;
  returned_ += n;
  return n;
}

std::int64_t settle_amount(const Ruleset& rules, const CommandProgress& progress) {
  if (progress.transferred) return 0;  // S1: the specialised path owns the units
  const bool early = progress.failure.has_value() && is_early_failure(*progress.failure);
  if (early && rules.early_failure == EarlyFailureReturn::kOne) return 1;  // L1-L3

  if (rules.budget_tracked) {  // K5: what is still command-owned
    std::int64_t owned = progress.p - progress.claimed;
    if (rules.direct_returns == DirectReturns::kFromBudget) owned -= progress.direct_returned;  // K6
    return std::max<std::int64_t>(0, owned);
  }

  // No budget (legacy counts).
  switch (rules.batch_failure) {
    case BatchFailureReturn::kRemainingBudget:
      return std::max<std::int64_t>(0, progress.p - progress.claimed - progress.direct_returned);
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
