#include "spec/ruleset.h"

#include <array>

#include "absl/strings/str_cat.h"

namespace permitcheck::spec {
namespace {

// Rulebook sections 2-9: the final rules.
constexpr Ruleset kRevD{
    .id = RulesetId::kRevD,
    .name = "rev-d",
    .summary = "the final rules of PIP-491 (revision D)",
    .broker_sends_message_permits = true,
    .consumer_debit = DebitSource::kFinalized,
    .finalized_dispatchers = DispatcherCoverage::kAllSix,
    .client_reads_message_permits = true,
    .early_failure = EarlyFailureReturn::kResolvedP,
    .batch_failure = BatchFailureReturn::kRemainingBudget,
    .direct_returns = DirectReturns::kFromBudget,
    .before_start = BeforeStartReturn::kCommandOwned,
    .return_scope = ReturnScope::kIncarnation,
    .flow_recheck = FlowRecheck::kIdentity,
    .inconsistent = InconsistentHandling::kCorruptedData,
    .skipped_release = SkippedRelease::kDuplicateOnly,
    .budget_tracked = true,
};

// Rulebook section 10: Pulsar as it behaves today.
constexpr Ruleset kLegacy{
    .id = RulesetId::kLegacy,
    .name = "legacy",
    .summary = "Apache Pulsar before PIP-491 (rulebook section 10)",
    .broker_sends_message_permits = false,
    .consumer_debit = DebitSource::kPreAdmission,
    .finalized_dispatchers = DispatcherCoverage::kNone,
    .client_reads_message_permits = false,
    .early_failure = EarlyFailureReturn::kOne,
    .batch_failure = BatchFailureReturn::kSkippedPlusOne,
    .direct_returns = DirectReturns::kNoBudget,
    .before_start = BeforeStartReturn::kNothing,
    .return_scope = ReturnScope::kCurrentConsumer,
    .flow_recheck = FlowRecheck::kNone,
    .inconsistent = InconsistentHandling::kCorruptedData,
    .skipped_release = SkippedRelease::kDuplicateOnly,
    .budget_tracked = false,
};

// Rulebook section 11: the earlier revisions differ from D only at these decision points.
constexpr Ruleset revision(Ruleset r, RulesetId id, std::string_view name,
                           std::string_view summary) {
  r.id = id;
  r.name = name;
  r.summary = summary;
  return r;
}

constexpr Ruleset kRevA = [] {
  Ruleset r = revision(kRevD, RulesetId::kRevA, "rev-a",
                       "revision A: returns accepted on the same connection (F5)");
  r.return_scope = ReturnScope::kSameConnection;  // F5
  return r;
}();

constexpr Ruleset kRevB = [] {
  Ruleset r = revision(kRevD, RulesetId::kRevB, "rev-b",
                       "revision B: direct returns beside the budget (F1), persistent Shared "
                       "dispatchers only (F2), every skipped message released (F3)");
  r.direct_returns = DirectReturns::kBesideBudget;                   // F1
  r.finalized_dispatchers = DispatcherCoverage::kPersistentSharedOnly;  // F2
  r.skipped_release = SkippedRelease::kAll;                          // F3
  return r;
}();

constexpr Ruleset kRevC = [] {
  Ruleset r = revision(kRevD, RulesetId::kRevC, "rev-c",
                       "revision C: any malformed command closes the connection (F4)");
  r.inconsistent = InconsistentHandling::kCloseConnection;  // F4
  return r;
}();

constexpr std::array<const Ruleset*, 5> kAll = {&kLegacy, &kRevA, &kRevB, &kRevC, &kRevD};

}  // namespace

const Ruleset& ruleset(RulesetId id) {
  switch (id) {
    case RulesetId::kLegacy:
      return kLegacy;
    case RulesetId::kRevA:
      return kRevA;
    case RulesetId::kRevB:
      return kRevB;
    case RulesetId::kRevC:
      return kRevC;
    case RulesetId::kRevD:
      return kRevD;
  }
  return kRevD;
}

std::span<const Ruleset* const> all_rulesets() { return kAll; }

bool is_draft(RulesetId id) {
  return id == RulesetId::kRevA || id == RulesetId::kRevB || id == RulesetId::kRevC;
}

absl::StatusOr<const Ruleset*> parse_ruleset(std::string_view name) {
  for (const Ruleset* r : kAll) {
    if (r->name == name) return r;
  }
  std::string known;
  for (const Ruleset* r : kAll) {
    if (!known.empty()) known += ", ";
    known += r->name;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown ruleset \"", std::string(name), "\" (known: ", known, ")"));
}

}  // namespace permitcheck::spec
