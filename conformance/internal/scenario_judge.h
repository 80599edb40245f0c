// Judging one scenario run: the Monitor on the wire trace, the drain's exact surplus or
// shortfall, the known deviations with their numbers (X1, X6) and the attribution of a
// finding to the legacy row whose window the run opened (L1-L7, L9, L11, under the row's
// rule: C7, K7, E3, K4, N6).
#ifndef PERMITCHECK_CONFORMANCE_INTERNAL_SCENARIO_JUDGE_H_
#define PERMITCHECK_CONFORMANCE_INTERNAL_SCENARIO_JUDGE_H_

#include "conformance/scenario.h"

namespace permitcheck::conformance::internal {

// Fills out.violations, out.deviations and out.rows from out.events, out.drain and the
// window measurements. REQUIRES: out.events, out.params, out.client_failure are final.
void judge(const ClientSpec& client, ScenarioOutcome& out);

}  // namespace permitcheck::conformance::internal

#endif  // PERMITCHECK_CONFORMANCE_INTERNAL_SCENARIO_JUDGE_H_
