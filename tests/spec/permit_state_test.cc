#include "spec/permit_state.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace permitcheck::spec {
namespace {

using ::testing::HasSubstr;

constexpr std::int64_t kMax = 2147483647;  // 2^31-1

TEST(PermitState, DefaultThresholdIsHalfQAtLeastOne) {
  EXPECT_EQ(default_threshold(1000), 500);
  EXPECT_EQ(default_threshold(4), 2);
  EXPECT_EQ(default_threshold(5), 2);
  EXPECT_EQ(default_threshold(1), 1);
  EXPECT_EQ(default_threshold(0), 1);
}

TEST(PermitState, InitialGrantIsQOnceSubscribeSucceeded) {
  PermitState s(4, 2);
  EXPECT_FALSE(s.flow_enabled());
  EXPECT_FALSE(s.may_write_flow());  // no Flow before Subscribe succeeds
  absl::StatusOr<std::int64_t> initial = s.enable_flow();
  ASSERT_TRUE(initial.ok());
  EXPECT_EQ(*initial, 4);
  EXPECT_TRUE(s.flow_enabled());
  EXPECT_TRUE(s.may_write_flow());
  EXPECT_EQ(s.enable_flow().status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(PermitState, EndedStateIsNeverFlowEnabled) {
  PermitState s(4, 2);
  s.end();  // Subscribe failed (decision 4)
  EXPECT_EQ(s.enable_flow().status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(s.may_write_flow());
}

TEST(PermitState, AccumulatorSwapsToZeroAtThreshold) {
  PermitState s(4, 2);
  ASSERT_TRUE(s.enable_flow().ok());
  absl::StatusOr<std::optional<std::int64_t>> first = s.credit(1);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, std::nullopt);
  EXPECT_EQ(s.accumulator(), 1);
  absl::StatusOr<std::optional<std::int64_t>> second = s.credit(1);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, std::optional<std::int64_t>(2));
  EXPECT_EQ(s.accumulator(), 0);
}

TEST(PermitState, CreditPastThresholdDrainsEverything) {
  PermitState s(1000, 500);
  ASSERT_TRUE(s.credit(499).ok());
  absl::StatusOr<std::optional<std::int64_t>> flow = s.credit(100);
  ASSERT_TRUE(flow.ok());
  EXPECT_EQ(*flow, std::optional<std::int64_t>(599));
  EXPECT_EQ(s.accumulator(), 0);
}

TEST(PermitState, N3_EndedStateDropsCreditsAndQueuedFlows) {
  PermitState s(4, 2);
  ASSERT_TRUE(s.enable_flow().ok());
  ASSERT_TRUE(s.credit(1).ok());
  s.end();
  EXPECT_FALSE(s.current());
  EXPECT_FALSE(s.may_write_flow());  // a queued Flow re-checks identity and drops
  const absl::StatusOr<std::optional<std::int64_t>> late = s.credit(1);
  EXPECT_EQ(late.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(late.status().message()), HasSubstr("N3"));
  EXPECT_EQ(s.accumulator(), 1);
}

TEST(PermitState, ReplacementStartsEmptyAndIsSeparate) {
  PermitState old_state(4, 2);
  ASSERT_TRUE(old_state.enable_flow().ok());
  ASSERT_TRUE(old_state.credit(1).ok());
  old_state.end();
  PermitState replacement(4, 2);  // the old accumulator is never copied across
  EXPECT_EQ(replacement.accumulator(), 0);
  EXPECT_TRUE(replacement.current());
  ASSERT_TRUE(replacement.enable_flow().ok());
  absl::StatusOr<std::optional<std::int64_t>> flow = replacement.credit(1);
  ASSERT_TRUE(flow.ok());
  EXPECT_EQ(*flow, std::nullopt);  // 1 < T: the old unit did not count
  EXPECT_EQ(old_state.accumulator(), 1);
}

TEST(PermitState, N7_AccumulatorAtMaxPlusOneIsOutOfRange) {
  PermitState s(4, kMax + 1);  // a threshold the accumulator cannot reach
  absl::StatusOr<std::optional<std::int64_t>> at_max = s.credit(kMax);
  ASSERT_TRUE(at_max.ok());
  EXPECT_EQ(*at_max, std::nullopt);
  EXPECT_EQ(s.accumulator(), kMax);
  const absl::StatusOr<std::optional<std::int64_t>> over = s.credit(1);
  EXPECT_EQ(over.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(over.status().message()), HasSubstr("N7"));
  EXPECT_THAT(std::string(over.status().message()), HasSubstr("2147483647 + 1"));
  EXPECT_EQ(s.accumulator(), kMax);  // unchanged
}

TEST(PermitState, SingleCreditAboveMaxIsOutOfRange) {
  PermitState s(4, 2);
  const absl::StatusOr<std::optional<std::int64_t>> over = s.credit(kMax + 1);
  EXPECT_EQ(over.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(s.accumulator(), 0);
  absl::StatusOr<std::optional<std::int64_t>> max = s.credit(kMax);
  ASSERT_TRUE(max.ok());
  EXPECT_EQ(*max, std::optional<std::int64_t>(kMax));
}

RC_GTEST_PROP(PermitState, FlowsPlusAccumulatorEqualCredits, ()) {
  const std::int64_t q = *rc::gen::inRange<std::int64_t>(0, 2000);
  const std::int64_t t = default_threshold(q);
  const auto credits =
      *rc::gen::container<std::vector<std::int64_t>>(rc::gen::inRange<std::int64_t>(0, 50));
  PermitState s(q, t);
  RC_ASSERT(*s.enable_flow() == q);
  std::int64_t credited = 0;
  std::int64_t flowed = 0;
  for (std::int64_t n : credits) {
    absl::StatusOr<std::optional<std::int64_t>> flow = s.credit(n);
    RC_ASSERT(flow.ok());
    credited += n;
    if (flow->has_value()) {
      RC_ASSERT(**flow >= t);
      RC_ASSERT(s.accumulator() == 0);
      flowed += **flow;
    }
    RC_ASSERT(s.accumulator() < t);
    RC_ASSERT(flowed + s.accumulator() == credited);
  }
}

}  // namespace
}  // namespace permitcheck::spec
