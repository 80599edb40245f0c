#include "spec/broker_consumer.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "spec/finalize.h"

namespace permitcheck::spec {
namespace {

using ::testing::HasSubstr;

TEST(BrokerConsumer, PlusOneAdmitsTenLeavingMinusNine) {
  BrokerConsumer c;
  ASSERT_TRUE(c.flow(1).ok());
  ASSERT_TRUE(c.debit(10, 10).ok());  // whole-entry dispatch: P = 10 on a balance of 1
  EXPECT_EQ(c.available(), -9);
  EXPECT_EQ(c.unacked(), 10);
}

TEST(BrokerConsumer, FlowOfTenReturnsToExactlyOneNeverClamped) {
  BrokerConsumer c;
  ASSERT_TRUE(c.flow(1).ok());
  ASSERT_TRUE(c.debit(10, 10).ok());
  ASSERT_TRUE(c.flow(10).ok());  // the 10 permits come back
  EXPECT_EQ(c.available(), 1);   // clamping at 0 would have given 10: an over-grant of 9
}

TEST(BrokerConsumer, DebtDeepensWithoutClamping) {
  BrokerConsumer c;
  ASSERT_TRUE(c.debit(10, 0).ok());
  ASSERT_TRUE(c.debit(10, 0).ok());
  EXPECT_EQ(c.available(), -20);
  ASSERT_TRUE(c.flow(5).ok());
  EXPECT_EQ(c.available(), -15);
}

TEST(BrokerConsumer, FlowIsAdditive) {
  BrokerConsumer c;
  ASSERT_TRUE(c.flow(1000).ok());
  ASSERT_TRUE(c.flow(500).ok());
  ASSERT_TRUE(c.flow(0).ok());
  EXPECT_EQ(c.available(), 1500);
  EXPECT_EQ(c.unacked(), 0);
}

TEST(BrokerConsumer, NegativeFlowIsRejected) {
  BrokerConsumer c;
  ASSERT_TRUE(c.flow(3).ok());
  EXPECT_FALSE(c.flow(-1).ok());
  EXPECT_EQ(c.available(), 3);
}

TEST(BrokerConsumer, BalanceLeavingInt64IsOutOfRange) {
  BrokerConsumer c;
  ASSERT_TRUE(c.flow(std::numeric_limits<std::int64_t>::max()).ok());
  const absl::Status s = c.flow(1);
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(c.available(), std::numeric_limits<std::int64_t>::max());
}

TEST(BrokerConsumer, B11_RemovedConsumerTakesNoFlowOrDebit) {
  BrokerConsumer c;
  ASSERT_TRUE(c.flow(1).ok());
  ASSERT_TRUE(c.debit(10, 10).ok());
  c.remove();
  EXPECT_TRUE(c.removed());
  const absl::Status f = c.flow(10);
  EXPECT_EQ(f.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(f.message()), HasSubstr("B11"));
  EXPECT_EQ(c.debit(1, 1).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(c.available(), -9);  // unchanged: the debt ended with the incarnation

  BrokerConsumer replacement;  // nothing is carried over
  EXPECT_EQ(replacement.available(), 0);
  EXPECT_EQ(replacement.unacked(), 0);
  EXPECT_FALSE(replacement.removed());
}

TEST(BrokerConsumer, L8_FinalizedSendAppliedToTheConsumer) {
  const std::vector<SendEntry> send = {{.batch_size = 10, .admitted = true},
                                       {.batch_size = 10, .admitted = false}};
  for (const Ruleset* rules : all_rulesets()) {
    const SendResult r = finalize_permits(*rules, DispatcherKind::kPersistentShared, send);
    ASSERT_FALSE(r.overflow.has_value());
    BrokerConsumer c;
    ASSERT_TRUE(c.flow(20).ok());
    ASSERT_TRUE(c.debit(r.consumer_debit, r.unacked_increase).ok());
    ASSERT_TRUE(c.flow(r.finalized_sum).ok());  // the client returns the 10 it received
    // rev-d: back to 20. legacy: 10 permits are permanently lost (L8).
    EXPECT_EQ(c.available(), rules->consumer_debit == DebitSource::kFinalized ? 20 : 10)
        << rules->name;
    EXPECT_EQ(c.unacked(), 10) << rules->name;
  }
}

RC_GTEST_PROP(BrokerConsumer, BalanceIsFlowsMinusDebits, ()) {
  const auto ops = *rc::gen::container<std::vector<std::pair<bool, std::int64_t>>>(
      rc::gen::pair(rc::gen::arbitrary<bool>(), rc::gen::inRange<std::int64_t>(0, 1000)));
  BrokerConsumer c;
  std::int64_t expected = 0;
  std::int64_t unacked = 0;
  for (const auto& [is_flow, n] : ops) {
    if (is_flow) {
      RC_ASSERT(c.flow(n).ok());
      expected += n;
    } else {
      RC_ASSERT(c.debit(n, n).ok());
      expected -= n;
      unacked += n;
    }
  }
  RC_ASSERT(c.available() == expected);
  RC_ASSERT(c.unacked() == unacked);
}

}  // namespace
}  // namespace permitcheck::spec
