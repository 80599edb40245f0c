// Judging one scenario run: what the driver measured beside the wire (the windows it opened,
// the entries that failed with the field absent, a late Flow, the drain) is written into the
// trace as facts (spec/scenario_facts.h), and the Monitor judges the whole trace: the drain's
// surplus or shortfall, the known deviations with their numbers (X1, X6) and the attribution
// of a finding to the legacy row whose window the run opened (L1-L7, L9, L11, under the row's
// rule: C7, K7, E3, K4, N6) are decided in spec/scenario_verdict.h, at the facts' lines.
#ifndef PERMITCHECK_CONFORMANCE_INTERNAL_SCENARIO_JUDGE_H_
#define PERMITCHECK_CONFORMANCE_INTERNAL_SCENARIO_JUDGE_H_

#include "conformance/scenario.h"

namespace permitcheck::conformance::internal {

// Appends the facts to out.events, then fills out.violations, out.deviations, out.rows and
// out.found_rows from them. REQUIRES: out.events, out.params, out.client_failure are final.
void judge(const ClientSpec& client, ScenarioOutcome& out);

}  // namespace permitcheck::conformance::internal

#endif  // PERMITCHECK_CONFORMANCE_INTERNAL_SCENARIO_JUDGE_H_
