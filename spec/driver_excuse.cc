#include "spec/driver_excuse.h"

#include <variant>

namespace permitcheck::spec {

bool leaves_balance_inexact(const Finding& deviation) {
  switch (deviation.rule) {
    case RuleId::kX1:
    case RuleId::kX2:
    case RuleId::kX5:
    case RuleId::kX6:
      return true;
    default:
      return false;
  }
}

bool explained_by_driver(const Finding& v, const Event& e, const DriverFacts& d) {
  const bool flow_or_quiescence = std::holds_alternative<Flow>(e) || std::holds_alternative<Quiescent>(e);
  switch (v.rule) {
    case RuleId::kW2:  // an injected value out of range
    case RuleId::kE4:  // an injected value in range
      return std::holds_alternative<Message>(e) && d.corrupted_on_wire;
    case RuleId::kN4:
      // Legacy Pulsar credits a late return on the same pooled connection to the replacement
      // and may write that Flow before the replacement's Subscribe succeeded (the L7 path).
      return d.ruleset == RulesetId::kLegacy && d.legacy_implementation && std::holds_alternative<Flow>(e);
    case RuleId::kC5: {
      // An injected in-range value near 2^31 - 1, settled as C5 says, overflows the
      // accumulator: the connection closes by N7, which the monitor reads as a C5 close.
      const auto* pe = std::get_if<ProtocolError>(&e);
      return pe != nullptr && d.any_consumer_corrupted && pe->reason == kAccumulatorOverflowReason;
    }
    case RuleId::kN7:
      // The monitor keeps a Flow that is due but not yet written (queued on the event loop) in
      // the accumulator, while N5 swaps it to 0 when T is reached: a settle of an injected
      // 2^31 - 1 then reads as an N7 overflow. Only an injected value gets near 2^31 - 1; the
      // model (PermitState) still checks the accumulator.
      return std::holds_alternative<Settle>(e) && d.any_consumer_corrupted;
    case RuleId::kB12:
    case RuleId::kB13:
      // B12/B13 judge the available permits the monitor derives from the serialized values; an
      // injected wire value (or an accepted inexactness) shifts them away from the broker's own
      // balance, which is what the broker dispatches on.
      return d.consumer_corrupted || d.consumer_inexact;
    case RuleId::kE2:
    case RuleId::kE5:
    case RuleId::kE6:
      // The balance carries an accepted inexactness (X1, X2, X5, X6), or an in-range wrong
      // message_permits the client settled as told (C5), not as the broker debited.
      return flow_or_quiescence && (d.consumer_inexact || d.consumer_corrupted);
    default:
      return false;
  }
}

}  // namespace permitcheck::spec
