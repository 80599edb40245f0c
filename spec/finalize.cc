#include "spec/finalize.h"

#include <array>
#include <cstddef>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"

namespace permitcheck::spec {
namespace {

constexpr std::array kAllKinds = {
    DispatcherKind::kPersistentShared,    DispatcherKind::kPersistentSharedClassic,
    DispatcherKind::kPersistentKeyShared, DispatcherKind::kPersistentKeySharedClassic,
    DispatcherKind::kNonPersistentShared, DispatcherKind::kNonPersistentKeyShared,
    DispatcherKind::kSingleActive,
};

// B8: why adding `p` of entry `entry` to the running `sum` (named `what`) leaves 1..2^31-1, or
// nullopt when it does not.
std::optional<std::string> overflow_of(std::int64_t sum, std::int64_t p, std::size_t entry,
                                       const char* what) {
  if (p > kMaxPermits) {
    return absl::StrCat("B8: P ", p, " of the entry at index ", entry, " exceeds 2^31-1 = ",
                        kMaxPermits);
  }
  if (sum > kMaxPermits - p) {
    return absl::StrCat("B8: ", what, " ", sum, " + ", p, " of the entry at index ", entry,
                        " overflows 2^31-1 = ", kMaxPermits);
  }
  return std::nullopt;
}

// B6 / F2: whether this dispatcher's aggregate uses the finalized sum under `rules`.
bool aggregate_uses_finalized(const Ruleset& rules, DispatcherKind kind) {
  switch (rules.finalized_dispatchers) {
    case DispatcherCoverage::kAllSix:
      return true;
    case DispatcherCoverage::kPersistentSharedOnly:
      return !is_sticky_key(kind);
    case DispatcherCoverage::kNone:
      return false;
  }
  return true;
}

}  // namespace

std::span<const DispatcherKind> all_dispatcher_kinds() { return kAllKinds; }

std::string_view dispatcher_name(DispatcherKind kind) {
  switch (kind) {
    case DispatcherKind::kPersistentShared:
      return "persistent_shared";
    case DispatcherKind::kPersistentSharedClassic:
      return "persistent_shared_classic";
    case DispatcherKind::kPersistentKeyShared:
      return "persistent_key_shared";
    case DispatcherKind::kPersistentKeySharedClassic:
      return "persistent_key_shared_classic";
    case DispatcherKind::kNonPersistentShared:
      return "non_persistent_shared";
    case DispatcherKind::kNonPersistentKeyShared:
      return "non_persistent_key_shared";
    case DispatcherKind::kSingleActive:
      return "single_active";
  }
  return "single_active";
}

std::optional<DispatcherKind> parse_dispatcher(std::string_view name) {
  for (DispatcherKind kind : kAllKinds) {
    if (dispatcher_name(kind) == name) return kind;
  }
  return std::nullopt;
}

bool has_aggregate(DispatcherKind kind) { return kind != DispatcherKind::kSingleActive; }

bool is_sticky_key(DispatcherKind kind) {
  return kind == DispatcherKind::kPersistentKeyShared ||
         kind == DispatcherKind::kPersistentKeySharedClassic ||
         kind == DispatcherKind::kNonPersistentKeyShared;
}

// Shared and Key_Shared acknowledge individually; Exclusive/Failover (single active) do not.
bool acks_individually(DispatcherKind kind) { return has_aggregate(kind); }

std::int64_t candidate_permits(std::int64_t batch_size, const AckSet& ack_set) {
  if (batch_size <= 0) return 0;                      // B3: nothing deliverable
  if (ack_set.absent()) return batch_size;            // B2: complete batch
  return ack_set.count_below(batch_size);             // B2: partial batch, bits >= B ignored
}

SendResult finalize_permits(const Ruleset& rules, DispatcherKind dispatcher,
                            std::span<const SendEntry> entries) {
  SendResult result;
  // Sum of candidates over every entry, rejected ones too: what legacy debits (L8, F2).
  std::int64_t pre_admission_sum = 0;
  const bool needs_pre_admission =
      rules.consumer_debit == DebitSource::kPreAdmission ||
      (has_aggregate(dispatcher) && !aggregate_uses_finalized(rules, dispatcher));

  for (std::size_t i = 0; i < entries.size(); ++i) {
    const SendEntry& entry = entries[i];
    const std::int64_t candidate = candidate_permits(entry.batch_size, entry.ack_set);
    const bool finalizes = entry.admitted && candidate >= 1;  // B1, B3
    // B8: the entry that would overflow a checked sum stops the send; earlier entries stay.
    std::optional<std::string> overflow;
    if (needs_pre_admission) {
      overflow = overflow_of(pre_admission_sum, candidate, i, "pre-admission sum");
    }
    if (!overflow && finalizes) {
      overflow = overflow_of(result.finalized_sum, candidate, i, "finalized sum");
    }
    if (overflow) {
      result.overflow = SendOverflow{.entry = i, .reason = std::move(*overflow)};
      break;
    }
    if (needs_pre_admission) pre_admission_sum += candidate;
    if (!finalizes) continue;  // B1, B3: no command, no debit
    result.finalized_sum += candidate;
    std::optional<std::uint32_t> field;
    if (rules.broker_sends_message_permits) {  // B7, W3: on every command, P = 1 included
      field = static_cast<std::uint32_t>(candidate);
    }
    result.commands.push_back({.entry = i, .p = candidate, .message_permits = field});
  }

  // B4 (L8 under legacy).
  result.consumer_debit = rules.consumer_debit == DebitSource::kFinalized ? result.finalized_sum
                                                                          : pre_admission_sum;
  // B6 (F2, L8).
  if (has_aggregate(dispatcher)) {
    result.dispatcher_debit =
        aggregate_uses_finalized(rules, dispatcher) ? result.finalized_sum : pre_admission_sum;
  }
  // B5: only admitted entries become pending acks, in individual-ack modes.
  result.unacked_increase = acks_individually(dispatcher) ? result.finalized_sum : 0;
  return result;
}

}  // namespace permitcheck::spec
