// The scenario driver (conformance/scenario_run.cc): everything between a client's first
// Subscribe and Flow and its quiescence for one ScenarioParams, opening the scenario's windows
// under bounded waits and recording what they measured in the outcome. Used by one attempt's
// lifecycle (conformance/scenario_attempt.cc), which owns the broker, the process and the
// judging.
//
//   ConformanceBroker broker(options); broker.start(); proc.start(command, log);
//   if (!internal::drive_scenario(client, params, broker, proc, out)) { /* never started */ }
//   out.events = broker.trace(); internal::judge(client, out);
//
// Guarantees: returns within client.timeout (plus the bounded drops' 5 s); false only when no
// Subscribe and Flow came within client.startup.
#ifndef PERMITCHECK_CONFORMANCE_INTERNAL_SCENARIO_DRIVER_H_
#define PERMITCHECK_CONFORMANCE_INTERNAL_SCENARIO_DRIVER_H_

#include "conformance/broker.h"
#include "conformance/internal/process.h"
#include "conformance/scenario.h"

namespace permitcheck::conformance::internal {

bool drive_scenario(const ClientSpec& client, const ScenarioParams& params,
                    ConformanceBroker& broker, ClientProcess& proc, ScenarioOutcome& out);

}  // namespace permitcheck::conformance::internal

#endif  // PERMITCHECK_CONFORMANCE_INTERNAL_SCENARIO_DRIVER_H_
