// Whether what a run's driver did explains a monitor finding: an injected fault (a wire value
// rewritten, a payload made to fail) or an accepted inexactness (a known deviation) shifts the
// balance the monitor derives, so the finding it then reports is the fault's effect, not the
// implementation's. The properties harness gathers the facts (spec/driver_facts.h) and counts
// an explained finding as no failure; the rule decisions are here.
//
//   if (leaves_balance_inexact(deviation)) inexact.insert(consumer);  // X1, X2, X5, X6
//   const DriverFacts d{.consumer_inexact = true};
//   explained_by_driver(Finding{RuleId::kE5, 30, "..."}, Quiescent{.consumer = 0}, d);  // true
//
// Guarantees: pure functions of their arguments; O(1).
#ifndef PERMITCHECK_SPEC_DRIVER_EXCUSE_H_
#define PERMITCHECK_SPEC_DRIVER_EXCUSE_H_

#include "spec/driver_facts.h"
#include "spec/events.h"
#include "spec/monitor.h"

namespace permitcheck::spec {

// X1, X2, X5, X6: a known deviation after which the balance of its consumer is no longer exact
// (the permits returned differ from the entries' by an accepted amount).
bool leaves_balance_inexact(const Finding& deviation);

// Whether violation `v` at event `e` is the effect of what the driver did, not a defect:
//   W2, E4 on a message whose wire value the run rewrote (the injected fault itself);
//   N4 on a Flow of legacy Pulsar checked against the legacy ruleset (L7's path writes the
//     replacement's Flow before its Subscribe succeeded; the monitor checks N4 under every
//     ruleset);
//   C5 on an N7 accumulator overflow after an injected value near 2^31 - 1;
//   N7 on a settle after an injected value (a due Flow not yet written stays in the monitor's
//     accumulator while N5 swaps it to 0);
//   B12, B13 at a consumer sent an injected value or with an inexact balance;
//   E2, E5, E6 on a Flow or quiescence of such a consumer.
bool explained_by_driver(const Finding& v, const Event& e, const DriverFacts& d);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_DRIVER_EXCUSE_H_
