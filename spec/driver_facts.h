// What a run's driver knows about the event a monitor finding points at, beside the trace: the
// faults it injected, which consumer an event belongs to, which connection a message came on.
// The properties harness gathers them; spec/bug_signature.h and spec/driver_excuse.h decide,
// from them, which known bug a finding is an instance of and whether an injected fault or an
// accepted inexactness explains it.
//
//   DriverFacts d{.legacy_implementation = true, .injected_stage = FailureStage::kChecksum};
//   legacy_signature(Finding{RuleId::kC7, 9, "..."}, false, Settle{.cmd = Id::number(7)}, d);  // "L1"
//
// Guarantees: plain data; every field defaults to "nothing known".
#ifndef PERMITCHECK_SPEC_DRIVER_FACTS_H_
#define PERMITCHECK_SPEC_DRIVER_FACTS_H_

#include <cstddef>
#include <optional>
#include <string_view>

#include "spec/command_budget.h"
#include "spec/events.h"
#include "spec/ruleset.h"

namespace permitcheck::spec {

// The reason of the protocol error a client raises when a return would take its permit
// accumulator past 2^31 - 1 (N7), as the properties' implementation gives it
// (impl/internal/consumer.cc).
inline constexpr std::string_view kAccumulatorOverflowReason = "permit accumulator overflow";

struct DriverFacts {
  // The run: an implementation of legacy Pulsar (else of a revision), checked against `ruleset`.
  bool legacy_implementation = false;
  RulesetId ruleset = RulesetId::kRevD;
  const Event* previous = nullptr;  // the event just before the finding's (nullptr: none)

  // The command of the finding's event (a settle's, direct return's or message's).
  std::optional<FailureStage> injected_stage;  // the run made its payload fail there
  bool corrupted_on_wire = false;  // the run rewrote one of its wire values
  bool direct_return = false;      // a direct return of it was recorded
  bool before_start = false;       // it was skipped as before startMessageId

  // The consumer of the finding's event (false when unknown).
  bool consumer_corrupted = false;  // it was sent an injected wire value
  bool consumer_inexact = false;    // its balance carries an accepted inexactness (X1, X2, X5, X6)
  bool any_consumer_corrupted = false;  // some consumer of the run was sent an injected value

  // A protocol error: the consumers whose incarnations the connection close after it ended.
  std::size_t consumers_ended_by_close = 0;
  // A message return: its message came on the connection the consumer's current incarnation
  // is on.
  bool returned_on_current_connection = false;
};

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_DRIVER_FACTS_H_
