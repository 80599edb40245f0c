// The verdicts from what a run's driver knows beside the trace (spec/driver_verdict.h), as the
// properties harness calls them: each known-bad fact names its rule, each good one gives nothing.
#include "spec/driver_verdict.h"

#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace permitcheck::spec {
namespace {

using ::testing::HasSubstr;

// The rule of a finding, or "none".
std::string driver_rule_of(const std::optional<Finding>& f) {
  return f ? std::string(rule_name(f->rule)) : "none";
}

TEST(DriverVerdict, S5_DeadLetteringFollowsTheRedeliveryCountExactly) {
  EXPECT_EQ(dead_letter_verdict(7, 3, 2, /*dead_lettered=*/true), std::nullopt);
  EXPECT_EQ(dead_letter_verdict(7, 2, 2, /*dead_lettered=*/false), std::nullopt);
  const std::optional<Finding> early = dead_letter_verdict(7, 2, 2, /*dead_lettered=*/true);
  EXPECT_EQ(driver_rule_of(early), "S5");
  EXPECT_EQ(early->explanation, "S5: command 7 was skipped as a dead letter at redelivery count "
                                "2, not past maxRedeliverCount = 2");
  const std::optional<Finding> late = dead_letter_verdict(7, 3, 2, /*dead_lettered=*/false);
  EXPECT_EQ(driver_rule_of(late), "S5");
  EXPECT_THAT(late->explanation, HasSubstr("handed off at redelivery count 3, past "
                                           "maxRedeliverCount = 2: it goes to dead-letter"));
}

TEST(DriverVerdict, K2_AHandOffFailsOnlyWhereTheRunMadeItFail) {
  EXPECT_EQ(restored_handoff_verdict(4, 1, 1), std::nullopt);
  const std::optional<Finding> none = restored_handoff_verdict(4, 1, -1);
  EXPECT_EQ(driver_rule_of(none), "K2");
  EXPECT_EQ(none->explanation, "K2: the hand-off of index 1 of command 4 failed and was restored, "
                               "but the run made none fail there (no hand-off of it fails)");
  EXPECT_THAT(restored_handoff_verdict(4, 1, 3)->explanation, HasSubstr("(index 3 fails)"));
}

TEST(DriverVerdict, S2_AnInOrderChunkThatSettledNothingTookTheOutOfOrderBranch) {
  const ChunkSettle bad{.cmd = 9, .chunk_id = 0, .num_chunks = 3, .in_order = true, .settled = 0};
  const std::optional<Finding> s2 = in_order_chunk_verdict(bad);
  EXPECT_EQ(driver_rule_of(s2), "S2");
  EXPECT_THAT(s2->explanation, HasSubstr("S2: chunk 0 of 3 (command 9) arrived in order"));
  ChunkSettle returned = bad;
  returned.settled = 1;
  EXPECT_EQ(in_order_chunk_verdict(returned), std::nullopt);
  ChunkSettle delivered = bad;
  delivered.progressed = true;
  EXPECT_EQ(in_order_chunk_verdict(delivered), std::nullopt);
  ChunkSettle out_of_order = bad;
  out_of_order.in_order = false;
  EXPECT_EQ(in_order_chunk_verdict(out_of_order), std::nullopt);
}

TEST(DriverVerdict, E6_EntriesPendingAtAConsumerThatAckedEverythingNeverDrain) {
  EXPECT_EQ(undrained_verdict(0, "b1", 0), std::nullopt);
  const std::optional<Finding> e6 = undrained_verdict(2, "b1", 0);
  EXPECT_EQ(driver_rule_of(e6), "E6");
  EXPECT_THAT(e6->explanation, HasSubstr("E6: settled with 2 entries pending at broker "
                                         "consumer b1 (consumer 0)"));
}

TEST(DriverVerdict, B13_BacklogWithPermitsAndNothingHeldBackIsNeverDispatched) {
  EXPECT_EQ(driver_rule_of(key_shared_backlog_verdict({.every_consumer_has_permits = true,
                                                .live_consumers = 1})),
            "B13");
  const std::optional<Finding> never = key_shared_backlog_verdict(
      {.every_consumer_has_permits = true, .live_consumers = 2, .none_pending = true,
       .never_sent = 3});
  EXPECT_EQ(driver_rule_of(never), "B13");
  EXPECT_THAT(never->explanation, HasSubstr("3 published entries never sent"));
  // A key held back (another consumer has it pending) or a consumer without permits: no verdict.
  EXPECT_EQ(key_shared_backlog_verdict({.every_consumer_has_permits = true, .live_consumers = 2}),
            std::nullopt);
  EXPECT_EQ(key_shared_backlog_verdict({.live_consumers = 1}), std::nullopt);
  EXPECT_EQ(driver_rule_of(backlog_verdict(4, "b2")), "B13");
  EXPECT_THAT(backlog_verdict(4, "b2")->explanation,
              HasSubstr("broker consumer b2 has 4 available permits"));
  EXPECT_EQ(backlog_verdict(0, "b2"), std::nullopt);
}

TEST(DriverVerdict, S7_AConsumerThatClosedItselfDoesNotSubscribeAgain) {
  EXPECT_EQ(resubscribed_after_close_verdict(false, 0, 1, "2"), std::nullopt);
  const std::optional<Finding> s7 = resubscribed_after_close_verdict(true, 0, 1, "2");
  EXPECT_EQ(driver_rule_of(s7), "S7");
  EXPECT_EQ(s7->explanation,
            "S7: consumer 0 closed itself (incarnation 1) but subscribed again as incarnation 2");
}

TEST(DriverVerdict, N5_AFlowAfterTheInitialGrantCarriesAtLeastT) {
  EXPECT_EQ(driver_rule_of(flow_below_threshold_verdict(3, 1, 5, true, false)), "N5");
  EXPECT_THAT(flow_below_threshold_verdict(3, 1, 5, true, false)->explanation,
              HasSubstr("N5: Flow of 3 for incarnation 1 below the threshold T = 5"));
  EXPECT_EQ(flow_below_threshold_verdict(5, 1, 5, true, false), std::nullopt);
  EXPECT_EQ(flow_below_threshold_verdict(3, 1, 5, false, false), std::nullopt);  // the grant
  EXPECT_EQ(flow_below_threshold_verdict(1, 1, 5, true, true), std::nullopt);    // zero queue
}

TEST(DriverVerdict, N4_FlowsOnlyFromAFlowEnabledIncarnationAndTheInitialGrantIsWritten) {
  EXPECT_EQ(zero_queue_flow_verdict(true, 0, 1, "c1"), std::nullopt);
  const std::optional<Finding> stray = zero_queue_flow_verdict(false, 0, 1, "c1");
  EXPECT_EQ(driver_rule_of(stray), "N4");
  EXPECT_THAT(stray->explanation, HasSubstr("zero-queue consumer 0 wrote a Flow of 1 on c1"));
  const std::optional<Finding> no_grant = initial_grant_verdict(false, false, 0, 1, 10);
  EXPECT_EQ(driver_rule_of(no_grant), "N4");
  EXPECT_THAT(no_grant->explanation, HasSubstr("never wrote its initial grant of Q = 10"));
  EXPECT_EQ(initial_grant_verdict(true, false, 0, 1, 10), std::nullopt);
  EXPECT_EQ(initial_grant_verdict(false, true, 0, 1, 10), std::nullopt);
  EXPECT_EQ(initial_grant_verdict(false, false, 0, 1, 0), std::nullopt);
}

TEST(DriverVerdict, K5_EveryCommandOfAnEndedConnectionSettled) {
  EXPECT_EQ(unsettled_at_disconnect_verdict(std::nullopt), std::nullopt);
  const std::optional<Finding> k5 = unsettled_at_disconnect_verdict(6);
  EXPECT_EQ(driver_rule_of(k5), "K5");
  EXPECT_EQ(k5->explanation, "K5: command 6 was received but never settled");
}

TEST(DriverVerdict, E6_AConsumerWithoutAFlowEnabledIncarnationAtQuiescenceIsStalled) {
  EXPECT_EQ(stalled_verdict(StallCause::kNone, 0, 1), std::nullopt);
  EXPECT_EQ(stalled_verdict(StallCause::kNeverSubscribed, 0, 0)->explanation,
            "consumer 0 is stalled at quiescence: it never subscribed");
  EXPECT_EQ(driver_rule_of(stalled_verdict(StallCause::kEndedWithoutReplacement, 0, 3)), "E6");
  EXPECT_THAT(stalled_verdict(StallCause::kEndedWithoutReplacement, 0, 3)->explanation,
              HasSubstr("its incarnation 3 ended and no replacement subscribed"));
  EXPECT_THAT(stalled_verdict(StallCause::kNeverFlowEnabled, 0, 3)->explanation,
              HasSubstr("its incarnation 3 never became Flow-enabled"));
}

TEST(DriverVerdict, E5_AZeroQueueConsumerHoldsAtMostOnePermitAtQuiescence) {
  EXPECT_EQ(zero_queue_available_verdict(1, "b1", 0), std::nullopt);
  const std::optional<Finding> e5 = zero_queue_available_verdict(2, "b1", 0);
  EXPECT_EQ(driver_rule_of(e5), "E5");
  EXPECT_THAT(e5->explanation, HasSubstr("zero-queue broker consumer b1 (consumer 0) has 2"));
}

TEST(DriverVerdict, C5_B7_TheUnacknowledgedInconsistentAndTheUnwrittenCommand) {
  const Finding c5 = unacknowledged_inconsistent_finding(3, "c1");
  EXPECT_EQ(c5.rule, RuleId::kC5);
  EXPECT_EQ(c5.explanation,
            "C5: inconsistent command 3 on c1 was never acknowledged with a validation error");
  const std::optional<Finding> b7 = unwritten_command_verdict(5);
  EXPECT_EQ(driver_rule_of(b7), "B7");
  EXPECT_EQ(b7->explanation, "B7: command 5 was finalized by a send but never reached the client");
  EXPECT_EQ(unwritten_command_verdict(std::nullopt), std::nullopt);
}

}  // namespace
}  // namespace permitcheck::spec
