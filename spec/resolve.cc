#include "spec/resolve.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "spec/finalize.h"
#include "spec/plain_text.h"

namespace permitcheck::spec {
namespace {

constexpr std::array kAllSources = {PermitSource::kExplicit, PermitSource::kAckSet,
                                    PermitSource::kBatch, PermitSource::kLegacy};

// C1 step (1) is read only by rulesets whose client knows the field; others see it absent.
std::optional<std::uint64_t> field_as_read(const Ruleset& rules,
                                           std::optional<std::uint64_t> message_permits) {
  return rules.client_reads_message_permits ? message_permits : std::nullopt;
}

}  // namespace

std::string_view permit_source_name(PermitSource source) {
  switch (source) {
    case PermitSource::kExplicit:
      return "explicit";
    case PermitSource::kAckSet:
      return "ack_set";
    case PermitSource::kBatch:
      return "batch";
    case PermitSource::kLegacy:
      return "legacy";
  }
  return "legacy";
}

std::optional<PermitSource> parse_permit_source(std::string_view name) {
  for (PermitSource source : kAllSources) {
    if (permit_source_name(source) == name) return source;
  }
  return std::nullopt;
}

bool message_permits_in_range(std::uint64_t value) {
  return value >= 1 && value <= static_cast<std::uint64_t>(kMaxPermits);  // W2
}

Resolution resolve_early(const Ruleset& rules, std::optional<std::uint64_t> message_permits,
                         const AckSet& ack_set) {
  const std::optional<std::uint64_t> field = field_as_read(rules, message_permits);
  if (field.has_value() && message_permits_in_range(*field)) {  // C1 (1)
    return {static_cast<std::int64_t>(*field), PermitSource::kExplicit};
  }
  if (const std::int64_t all = ack_set.count_all(); all > 0) {  // C2: B unknown, X6
    return {all, PermitSource::kAckSet};
  }
  return {1, PermitSource::kLegacy};  // C1 (4)
}

Validation validate_permits(const Ruleset& rules, std::optional<std::uint64_t> message_permits,
                            const AckSet& ack_set, std::int64_t batch_size) {
  const std::optional<std::uint64_t> field = field_as_read(rules, message_permits);
  const std::int64_t bounded = ack_set.count_below(batch_size);
  const std::int64_t expected = ack_set.absent() ? batch_size : bounded;
  // B <= 0, a present all-zero ack_set, or set bits only beyond B (C5, decision 2).
  const bool no_deliverable = batch_size <= 0 || (!ack_set.absent() && bounded == 0);

  if (field.has_value()) {
    if (!message_permits_in_range(*field)) {  // C4 / W2
      return {.verdict = Verdict::kProtocolError,
              .resolution = {},
              .rule = RuleId::kC4,
              .reason = absl::StrCat("message_permits ", *field, " outside 1..", kMaxPermits)};
    }
    const Resolution explicit_p{static_cast<std::int64_t>(*field), PermitSource::kExplicit};
    if (no_deliverable || explicit_p.p != expected) {  // C5: settle exactly the explicit P
      return {.verdict = Verdict::kInconsistent,
              .resolution = explicit_p,
              .rule = RuleId::kC5,
              .reason = absl::StrCat("explicit ", explicit_p.p, " != expected ", expected,
                                     " (batch_size ", batch_size, ", ack_set ",
                                     ack_set.absent() ? "absent" : "present", ", ",
                                     count_noun(ack_set.count_all(), "bit"), " set, ", bounded,
                                     " below B)")};
    }
    return {.verdict = Verdict::kValid,
            .resolution = explicit_p,
            .rule = RuleId::kC3,
            .reason = absl::StrCat("explicit ", explicit_p.p, " == expected ", expected)};
  }

  // C6: field absent, best-effort fallback; never a protocol error.
  if (no_deliverable) {  // decision 2: corrupted data settling the early value (C2)
    const Resolution early = resolve_early(rules, message_permits, ack_set);
    return {.verdict = Verdict::kInconsistent,
            .resolution = early,
            .rule = RuleId::kC5,
            .reason = absl::StrCat("field absent, batch_size ", batch_size, ", ack_set ",
                                   ack_set.absent() ? "absent" : "present", " with ",
                                   count_noun(ack_set.count_all(), "bit"), " set, ", bounded,
                                   " below B: settling early value ", early.p)};
  }
  const Resolution fallback{expected,
                            ack_set.absent() ? PermitSource::kBatch : PermitSource::kAckSet};
  return {.verdict = Verdict::kValid,
          .resolution = fallback,
          .rule = RuleId::kC1,
          .reason = absl::StrCat("field absent: P = ", expected, " from ",
                                 std::string(permit_source_name(fallback.source)))};
}

}  // namespace permitcheck::spec
