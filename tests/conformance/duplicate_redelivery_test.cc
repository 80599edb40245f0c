// The duplicate_redelivery scenario (conformance/scenario_run.cc): entries the client has just
// acknowledged go out again. The reference client returns exactly their P (K4); the newest Go
// release returns them too (pulsar-client-go#1181); the window is said to be not opened when
// the client does not Flow for a round.
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "conformance/scenario.h"
#include "tests/conformance/official_client.h"

namespace permitcheck::conformance {
namespace {

using spec::RuleId;
using testing::batch;
using testing::dump;
using testing::opened;
using testing::params;
using testing::reference_client;

TEST(ReferenceClient, DuplicatesInTheAckWindowReturnExactlyTheirP) {
  ScenarioOutcome o = run_scenario(reference_client(),
                                   params(ScenarioKind::kDuplicateRedelivery, {batch(5)}));
  EXPECT_FALSE(o.failed()) << dump(o);
  EXPECT_TRUE(opened(o, "6 rounds")) << dump(o);
  EXPECT_TRUE(opened(o, "(6 duplicate entries); 6 rounds saw a Flow")) << dump(o);
  ASSERT_TRUE(o.drain.measured) << dump(o);
  EXPECT_EQ(o.drain.delta, 0) << dump(o);
}

TEST(ReferenceClient, RoundsOfFewerThanTMessagesAreToppedUpWithSingles) {
  // Two singles a round with T = 5: three singles more, so the client Flows for the round.
  ScenarioOutcome o = run_scenario(
      reference_client(), params(ScenarioKind::kDuplicateRedelivery, {EntrySpec{}, EntrySpec{}}));
  EXPECT_FALSE(o.failed()) << dump(o);
  EXPECT_TRUE(opened(o, "(30 duplicate entries); 6 rounds saw a Flow")) << dump(o);
  ASSERT_TRUE(o.drain.measured) << dump(o);
  EXPECT_EQ(o.drain.delta, 0) << dump(o);
}

// A client that never Flows after its first one (a queue of 10, T = 5 claimed, but it Flows
// nothing): no round can be timed, and the run says so.
TEST(DuplicateRedelivery, ARoundWithoutAFlowLeavesTheWindowNotOpened) {
  ClientSpec c = reference_client();
  c.command += " --q 100";  // it asks for 100 and flows only at 50: never within a round
  ScenarioOutcome o = run_scenario(c, params(ScenarioKind::kDuplicateRedelivery, {EntrySpec{}}));
  ASSERT_EQ(o.not_opened.size(), 1u) << dump(o);
  EXPECT_NE(o.not_opened[0].find("no round got a Flow"), std::string::npos) << dump(o);
}

TEST(GoClient, DroppedDuplicatesReturnTheirPermits) {
  if (!testing::installed("clients/go/permitcheck-go-consumer")) {
    GTEST_SKIP() << "the Go client consumer is not built (ci/install-go-client.sh) or sanitized";
  }
  ScenarioOutcome o = run_scenario(testing::preset_client("go"),
                                   params(ScenarioKind::kDuplicateRedelivery, {batch(5)}));
  EXPECT_FALSE(o.failed()) << dump(o);
  EXPECT_TRUE(opened(o, "6 rounds saw a Flow after the duplicates")) << dump(o);
  EXPECT_EQ(o.granted - o.debited, 10) << dump(o);
}

}  // namespace
}  // namespace permitcheck::conformance
