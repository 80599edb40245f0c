// A client's exit in the conformance judge (spec/client_exit.h, recorded by scenario_run.cc):
// the monitor reports it under the scenario's rule, and the judge never explains it away as the
// field-absent fallback (X1), even where that rule is E6 and the fallback's numbers fit.
#include <gtest/gtest.h>

#include "conformance/scenario.h"
#include "tests/conformance/official_client.h"

namespace permitcheck::conformance {
namespace {

using spec::RuleId;
using testing::dump;
using testing::has;
using testing::reference_client;

TEST(ClientExitJudge, E6_X1_AClientsExitIsNeverTheFallbacksDeviation) {
  ClientSpec c = reference_client();
  c.command += " --mutant exit-on-checksum";
  // Old broker (field absent): b8 failing its checksum may return the fallback 1 (X1). The
  // client exits there instead: 10 granted, 8 debited, so the quiescence bound fits the
  // fallback's 7 short and the excuse is in play.
  const ScenarioParams p{.kind = ScenarioKind::kSlowConsumer,
                         .send_field = false,
                         .entries = {EntrySpec{.batch_size = 8, .batched = true,
                                               .fault = EntryFault::kChecksum}}};
  const ScenarioOutcome o = run_scenario(c, p);
  ASSERT_TRUE(o.client_failure.has_value()) << dump(o);
  EXPECT_TRUE(has(o.deviations, RuleId::kX1, "with the field absent")) << dump(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE6, "exited with status 3 during slow_consumer"))
      << dump(o);
  EXPECT_FALSE(has(o.deviations, RuleId::kX1, "exited with status 3")) << dump(o);
}

}  // namespace
}  // namespace permitcheck::conformance
