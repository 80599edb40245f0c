#include "spec/model_verdict.h"

#include "absl/strings/str_cat.h"
#include "base/absl_view.h"
#include "spec/plain_text.h"

namespace permitcheck::spec {
namespace {

std::string join_names(const std::set<std::string>& s) {
  std::string out;
  for (const std::string& x : s) out += (out.empty() ? "" : ",") + x;
  return "{" + out + "}";
}

}  // namespace

std::optional<Finding> send_start_verdict(RulesetId rules, std::string_view inc,
                                          std::int64_t available) {
  if (available > 0 || rules == RulesetId::kLegacy) return std::nullopt;
  return Finding{RuleId::kB12, 0,
                 absl::StrCat("B12: broker consumer ", to_absl(inc), " was sent to with ",
                              count_noun(available, "available permit"),
                              " (a send starts only while they are positive)")};
}

std::optional<Finding> round_start_verdict(RulesetId rules, std::string_view inc,
                                           std::string_view dispatcher, std::int64_t aggregate) {
  if (aggregate > 0 || rules == RulesetId::kLegacy) return std::nullopt;
  return Finding{RuleId::kB12, 0,
                 absl::StrCat("B12: broker consumer ", to_absl(inc), " was sent to while the ",
                              to_absl(dispatcher), " aggregate was ", aggregate,
                              " (a send starts only while it is positive)")};
}

std::optional<Finding> failure_record_verdict(std::uint64_t cmd,
                                              const std::multiset<int>& implementation,
                                              const std::multiset<int>& specification) {
  if (implementation == specification) return std::nullopt;
  return Finding{RuleId::kC7,
                 0,
                 absl::StrCat("command ", cmd, " recorded ",
                              count_noun(implementation.size(), "failure"),
                              "; the specification records ", specification.size())};
}

std::optional<Finding> command_return_verdict(std::uint64_t cmd, std::int64_t implementation,
                                              std::int64_t specification) {
  if (implementation == specification) return std::nullopt;
  return Finding{RuleId::kK5, 0,
                 absl::StrCat("command ", cmd, " returned ", implementation,
                              " by itself (direct + terminal); the specification returns ",
                              specification)};
}

std::optional<Finding> handoff_verdict(std::uint64_t cmd,
                                       const std::set<std::string>& implementation,
                                       const std::set<std::string>& specification) {
  if (implementation == specification) return std::nullopt;
  return Finding{RuleId::kK2, 0,
                 absl::StrCat("command ", cmd, " handed off ", join_names(implementation),
                              "; the specification hands off ", join_names(specification))};
}

std::optional<Finding> connection_close_verdict(std::uint64_t cmd, bool spec_closes,
                                                bool overflow, bool implementation_closed) {
  if ((spec_closes || overflow) == implementation_closed) return std::nullopt;
  return Finding{RuleId::kC4, 0,
                 absl::StrCat("command ", cmd, spec_closes ? " must" : " must not",
                              " close its connection (protocol error)")};
}

Finding unknown_broker_consumer_finding(std::string_view inc) {
  return Finding{RuleId::kB11, 0,
                 absl::StrCat("broker consumer ", to_absl(inc),
                              " is unknown to the specification")};
}

std::optional<Finding> removed_broker_consumer_verdict(std::string_view inc, bool live_in_model,
                                                       bool live_in_implementation) {
  if (!live_in_model || live_in_implementation) return std::nullopt;
  return Finding{RuleId::kB11, 0,
                 absl::StrCat("broker consumer ", to_absl(inc),
                              " was removed without the model seeing it")};
}

std::optional<Finding> available_verdict(std::string_view inc, std::int64_t implementation,
                                         std::int64_t specification) {
  if (implementation == specification) return std::nullopt;
  return Finding{RuleId::kB4, 0,
                 absl::StrCat("broker consumer ", to_absl(inc), " available: implementation ",
                              implementation, ", specification ", specification)};
}

std::optional<Finding> unacked_verdict(std::string_view inc, std::int64_t implementation,
                                       std::int64_t specification) {
  if (implementation == specification) return std::nullopt;
  return Finding{RuleId::kB5, 0,
                 absl::StrCat("broker consumer ", to_absl(inc),
                              " unacked increases: implementation ",
                              implementation, ", specification ", specification)};
}

std::optional<Finding> aggregate_verdict(std::int64_t implementation, std::int64_t live_sum) {
  if (implementation == live_sum) return std::nullopt;
  return Finding{RuleId::kB6, 0,
                 absl::StrCat("dispatcher aggregate: implementation ", implementation,
                              ", specification (sum over live consumers) ", live_sum)};
}

std::optional<Finding> current_incarnation_verdict(int consumer,
                                                   std::optional<std::uint64_t> implementation,
                                                   std::optional<std::uint64_t> specification) {
  if (implementation == specification) return std::nullopt;
  const auto name = [](std::optional<std::uint64_t> inc) {
    return inc ? std::to_string(*inc) : std::string("none");
  };
  return Finding{RuleId::kN1, 0,
                 absl::StrCat("consumer ", consumer, " current incarnation: implementation ",
                              name(implementation), ", specification ", name(specification))};
}

std::optional<Finding> accumulator_verdict(int consumer, std::uint64_t inc,
                                           std::int64_t implementation,
                                           std::int64_t specification) {
  if (implementation == specification) return std::nullopt;
  return Finding{RuleId::kN5, 0,
                 absl::StrCat("consumer ", consumer, " incarnation ", inc,
                              " accumulator: implementation ", implementation,
                              ", specification ", specification)};
}

}  // namespace permitcheck::spec
