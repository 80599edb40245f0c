// The active_consumer_change scenario (conformance/scenario_run.cc) and the broker's
// subscription types: ACTIVE_CONSUMER_CHANGE is written between the messages, as a broker
// writes it to Failover consumers; a Failover Subscribe gets one at once. The reference
// client returns no permit for it; its seeded mutant non-message-permit (1 permit for each)
// is caught under E2.
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
using testing::params;
using testing::reference_client;
using testing::reference_command;

TEST(ReferenceClient, ActiveConsumerChangeReturnsNoPermit) {
  for (const ScenarioParams& p : fixed_cases(ScenarioKind::kActiveConsumerChange, 10, 5)) {
    ScenarioOutcome o = run_scenario(reference_client(), p);
    EXPECT_FALSE(o.failed()) << dump(o);
    EXPECT_TRUE(opened(o, "10 ACTIVE_CONSUMER_CHANGE written to the Exclusive consumer"))
        << dump(o);
    ASSERT_TRUE(o.drain.measured) << dump(o);
    EXPECT_EQ(o.drain.delta, 0) << dump(o);
  }
}

// A Failover Subscribe is told at once that its consumer is active; the subscription type is
// reported in the window.
TEST(ConformanceBroker, FailoverSubscribeIsToldItIsActive) {
  ClientSpec c = reference_client();
  c.command = absl::StrCat(reference_command(), " --subscription-type failover");
  ScenarioOutcome o =
      run_scenario(c, params(ScenarioKind::kActiveConsumerChange, {batch(3)}));
  EXPECT_FALSE(o.failed()) << dump(o);
  EXPECT_TRUE(opened(o, "written to the Failover consumer")) << dump(o);
  int on_subscribe = 0;
  for (std::size_t i = 0; i < o.events.size(); ++i) {
    const auto* x = std::get_if<spec::Extension>(&o.events[i]);
    if (x && x->ev == "x-active-consumer-change-active" && i > 0 &&
        std::holds_alternative<spec::SubscribeOk>(o.events[i - 1])) {
      ++on_subscribe;
    }
  }
  EXPECT_GE(on_subscribe, 1) << dump(o);
}

TEST(ReferenceClientMutant, E2_NonMessageCommandCountedAsAPermitIsCaught) {
  ClientSpec c = reference_client();
  c.command = absl::StrCat(reference_command(), " --mutant non-message-permit");
  ScenarioOutcome o = run_scenario(
      c, params(ScenarioKind::kActiveConsumerChange, {batch(4), EntrySpec{}, batch(3)}));
  EXPECT_TRUE(has(o.violations, RuleId::kE2, "above Q = 10")) << dump(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE2, "too many in active_consumer_change")) << dump(o);
  // The same client passes complete_batches: only the non-message commands open its bug.
  ScenarioOutcome plain = run_scenario(
      c, params(ScenarioKind::kCompleteBatches, {batch(4), EntrySpec{}, batch(3)}));
  EXPECT_FALSE(plain.failed()) << dump(plain);
}

// The official clients' newest releases, where installed: Go returns no permit for the
// notification (no false alarm); the Rust client 6.9.1 counts each as a message
// (docs/findings/rust-active-consumer-change-counted-as-message.md).
TEST(GoClient, ActiveConsumerChangeReturnsNoPermit) {
  if (!testing::installed("clients/go/permitcheck-go-consumer")) {
    GTEST_SKIP() << "the Go client consumer is not built (ci/install-go-client.sh) or sanitized";
  }
  ScenarioOutcome o = run_scenario(
      testing::preset_client("go"),
      params(ScenarioKind::kActiveConsumerChange, {batch(4), EntrySpec{}, batch(3)}));
  EXPECT_FALSE(o.failed()) << dump(o);
  EXPECT_TRUE(opened(o, "written to the Shared consumer")) << dump(o);
}

TEST(RustClient, E2_E5_ActiveConsumerChangeIsCountedAsAMessage) {
  if (!testing::installed("clients/rust/permitcheck-rust-consumer")) {
    GTEST_SKIP() << "the Rust client consumer is not built (ci/install-rust-client.sh) or "
                    "sanitized";
  }
  ScenarioOutcome o = run_scenario(testing::preset_client("rust"),
                                   params(ScenarioKind::kActiveConsumerChange, {batch(2)}));
  EXPECT_TRUE(has(o.violations, RuleId::kE2, "above Q = 10")) << dump(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE5)) << dump(o);
}

}  // namespace
}  // namespace permitcheck::conformance
