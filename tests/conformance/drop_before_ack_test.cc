// The drop_before_ack scenario (conformance/scenario_run.cc): the broker drops the connection
// (or closes the consumer on it) right after a delivery, before the client acknowledged
// anything, so the messages still wait inside the client. The reference client processes them
// late with their retained, ended permit state (returns dropped) and passes; its seeded mutant
// queued-credit-to-replacement (clears them and credits their count to the replacement) is
// caught under E3 with both connections named.
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "conformance/scenario.h"
#include "tests/conformance/official_client.h"

namespace permitcheck::conformance {
namespace {

using spec::RuleId;
using testing::batch;
using testing::dump;
using testing::has;
using testing::opened;
using testing::reference_client;
using testing::reference_command;

TEST(ReferenceClient, DropBeforeAckCreditsNothingToTheReplacement) {
  for (const ScenarioParams& p : fixed_cases(ScenarioKind::kDropBeforeAck, 10, 5)) {
    ScenarioOutcome o = run_scenario(reference_client(), p);
    EXPECT_FALSE(o.failed()) << dump(o);
    // The drop came after the frames were written: the client had all 4 and processed the
    // ones not yet started after the replacement subscribed (their returns dropped with the
    // ended state; the one in processing at the drop acknowledged on the old connection's
    // way out, or lost with it).
    EXPECT_TRUE(opened(o, "4 messages delivered on c1 and none acknowledged")) << dump(o);
    EXPECT_FALSE(opened(o, " 0 of them acknowledged after that")) << dump(o);
    EXPECT_TRUE(opened(o, p.same_connection ? "subscribed on c1" : "subscribed on c2"))
        << dump(o);
    EXPECT_EQ(o.incarnations, 2) << dump(o);
    ASSERT_TRUE(o.drain.measured) << dump(o);
    EXPECT_EQ(o.drain.delta, 0) << dump(o);
  }
}

TEST(ReferenceClientMutant, E3_QueuedCreditToTheReplacementIsCaught) {
  ClientSpec c = reference_client();
  c.command = absl::StrCat(reference_command(), " --mutant queued-credit-to-replacement");
  for (const ScenarioParams& p : fixed_cases(ScenarioKind::kDropBeforeAck, 10, 5)) {
    ScenarioOutcome o = run_scenario(c, p);
    const std::string row = p.same_connection ? "L7: " : "L6: ";
    EXPECT_TRUE(has(o.violations, RuleId::kE3, absl::StrCat(row, "4 messages inside the client")))
        << dump(o);
    // The cleared ones (all but the one in processing at the drop) came back to c2's consumer.
    EXPECT_TRUE(has(o.violations, RuleId::kE3, " too many (")) << dump(o);
    EXPECT_TRUE(has(o.violations, RuleId::kE2, "above Q = 10")) << dump(o);
    EXPECT_TRUE(opened(o, " 0 of them acknowledged after that")) << dump(o);
  }
  // The same client passes complete_batches: nothing ends while messages wait in it.
  ScenarioOutcome plain = run_scenario(
      c, testing::params(ScenarioKind::kCompleteBatches, {batch(4), EntrySpec{}, batch(3)}));
  EXPECT_FALSE(plain.failed()) << dump(plain);
}

}  // namespace
}  // namespace permitcheck::conformance
