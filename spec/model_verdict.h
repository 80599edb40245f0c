// Verdicts of a model-based check: what an implementation's state shows against what the
// specification's model of the same run computes (the properties' SpecModel). The model
// gathers both sides; which rule a disagreement breaks is decided here, one function each,
// returning the finding (line 0) or nullopt when the two agree.
//
//   if (std::optional<Finding> f = available_verdict("b2", /*impl=*/-3, /*spec=*/1)) {
//     report(*f);  // B4: "broker consumer b2 available: implementation -3, specification 1"
//   }
//
// Guarantees: pure functions of their arguments; linear in the sets given.
#ifndef PERMITCHECK_SPEC_MODEL_VERDICT_H_
#define PERMITCHECK_SPEC_MODEL_VERDICT_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "spec/monitor.h"
#include "spec/ruleset.h"

namespace permitcheck::spec {

// ---- per send and per command ----

// B12: a send starts only while the consumer's available permits are positive (not a promise
// of legacy Pulsar).
std::optional<Finding> send_start_verdict(RulesetId rules, std::string_view inc,
                                          std::int64_t available);

// B12: and, for a dispatcher that reads (a round starts at a read), while its aggregate (B6) is
// positive, judged at the first send of a round.
std::optional<Finding> round_start_verdict(RulesetId rules, std::string_view inc,
                                           std::string_view dispatcher, std::int64_t aggregate);

// C7: a command records the payload failures (spec::FailureStage, as int) the specification's
// run of it records. REQUIRES: the implementation runs the rules of the model.
std::optional<Finding> failure_record_verdict(std::uint64_t cmd,
                                              const std::multiset<int>& implementation,
                                              const std::multiset<int>& specification);

// K5: what a command returned by itself (direct + terminal) is what the specification returns.
std::optional<Finding> command_return_verdict(std::uint64_t cmd, std::int64_t implementation,
                                              std::int64_t specification);

// K2: a command hands off the messages the specification hands off.
std::optional<Finding> handoff_verdict(std::uint64_t cmd,
                                       const std::set<std::string>& implementation,
                                       const std::set<std::string>& specification);

// C4 (and N7's overflow): a command closes its connection with a protocol error exactly when
// the specification does (`spec_closes`) or an accumulator overflow (N7) forbids its credit.
std::optional<Finding> connection_close_verdict(std::uint64_t cmd, bool spec_closes,
                                                bool overflow, bool implementation_closed);

// ---- the settled state ----

// B11: a live broker consumer the specification does not know of.
Finding unknown_broker_consumer_finding(std::string_view inc);

// B11: a broker consumer live in the model and gone from the implementation was removed
// without the model seeing it.
std::optional<Finding> removed_broker_consumer_verdict(std::string_view inc, bool live_in_model,
                                                       bool live_in_implementation);

// B4: a live broker consumer's available permits.
std::optional<Finding> available_verdict(std::string_view inc, std::int64_t implementation,
                                         std::int64_t specification);

// B5: its unacked increases.
std::optional<Finding> unacked_verdict(std::string_view inc, std::int64_t implementation,
                                       std::int64_t specification);

// B6: the dispatcher's aggregate is the sum over its live consumers.
std::optional<Finding> aggregate_verdict(std::int64_t implementation, std::int64_t live_sum);

// N1: a consumer's current incarnation (nullopt: none).
std::optional<Finding> current_incarnation_verdict(int consumer,
                                                   std::optional<std::uint64_t> implementation,
                                                   std::optional<std::uint64_t> specification);

// N5: the current incarnation's accumulator.
std::optional<Finding> accumulator_verdict(int consumer, std::uint64_t inc,
                                           std::int64_t implementation,
                                           std::int64_t specification);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_MODEL_VERDICT_H_
