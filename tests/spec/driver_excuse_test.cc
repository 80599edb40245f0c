// Whether what the driver did explains a monitor finding (spec/driver_excuse.h): each excuse's
// known case is explained, the same finding without the fact is not.
#include "spec/driver_excuse.h"

#include "gtest/gtest.h"

namespace permitcheck::spec {
namespace {

bool excused(RuleId rule, const Event& e, const DriverFacts& d) {
  return explained_by_driver(Finding{rule, 9, "..."}, e, d);
}

TEST(DriverExcuse, X1_X2_X5_X6_LeaveTheBalanceInexactAndOthersDoNot) {
  for (RuleId rule : {RuleId::kX1, RuleId::kX2, RuleId::kX5, RuleId::kX6}) {
    EXPECT_TRUE(leaves_balance_inexact(Finding{rule, 3, "..."})) << rule_name(rule);
  }
  EXPECT_FALSE(leaves_balance_inexact(Finding{RuleId::kX3, 3, "..."}));
  EXPECT_FALSE(leaves_balance_inexact(Finding{RuleId::kX4, 3, "..."}));
}

TEST(DriverExcuse, W2_E4_OnAMessageWhoseWireValueTheRunRewrote) {
  const Message m{.consumer = 0, .cmd = Id::number(7)};
  EXPECT_TRUE(excused(RuleId::kW2, m, {.corrupted_on_wire = true}));
  EXPECT_TRUE(excused(RuleId::kE4, m, {.corrupted_on_wire = true}));
  EXPECT_FALSE(excused(RuleId::kW2, m, {}));
  EXPECT_FALSE(excused(RuleId::kE4, Settle{.cmd = Id::number(7)}, {.corrupted_on_wire = true}));
}

TEST(DriverExcuse, N4_ALegacyFlowOnlyForLegacyPulsarAgainstTheLegacyRuleset) {
  const Flow f{.consumer = 0, .permits = 5};
  EXPECT_TRUE(excused(RuleId::kN4, f, {.legacy_implementation = true, .ruleset = RulesetId::kLegacy}));
  EXPECT_FALSE(excused(RuleId::kN4, f, {.legacy_implementation = true, .ruleset = RulesetId::kRevD}));
  EXPECT_FALSE(excused(RuleId::kN4, f, {.legacy_implementation = false, .ruleset = RulesetId::kLegacy}));
}

TEST(DriverExcuse, C5_N7_AnInjectedValueNearTheLimitOverflowsTheAccumulator) {
  const ProtocolError overflow{.cnx = Id::text("c1"), .reason = std::string(kAccumulatorOverflowReason)};
  EXPECT_TRUE(excused(RuleId::kC5, overflow, {.any_consumer_corrupted = true}));
  EXPECT_FALSE(excused(RuleId::kC5, overflow, {}));
  EXPECT_FALSE(excused(RuleId::kC5, ProtocolError{.cnx = Id::text("c1"), .reason = "bad"},
                       {.any_consumer_corrupted = true}));
  EXPECT_TRUE(excused(RuleId::kN7, Settle{.cmd = Id::number(7)}, {.any_consumer_corrupted = true}));
  EXPECT_FALSE(excused(RuleId::kN7, Settle{.cmd = Id::number(7)}, {}));
}

TEST(DriverExcuse, B12_B13_AtAConsumerWithAnInjectedValueOrAnInexactBalance) {
  const Quiescent q{.consumer = 0};
  for (RuleId rule : {RuleId::kB12, RuleId::kB13}) {
    EXPECT_TRUE(excused(rule, q, {.consumer_corrupted = true}));
    EXPECT_TRUE(excused(rule, q, {.consumer_inexact = true}));
    EXPECT_FALSE(excused(rule, q, {.any_consumer_corrupted = true}));  // another consumer's
  }
}

TEST(DriverExcuse, E2_E5_E6_OnAFlowOrQuiescenceOfSuchAConsumer) {
  for (RuleId rule : {RuleId::kE2, RuleId::kE5, RuleId::kE6}) {
    EXPECT_TRUE(excused(rule, Flow{.consumer = 0}, {.consumer_inexact = true}));
    EXPECT_TRUE(excused(rule, Quiescent{.consumer = 0}, {.consumer_corrupted = true}));
    EXPECT_FALSE(excused(rule, Quiescent{.consumer = 0}, {}));
    EXPECT_FALSE(excused(rule, Settle{.cmd = Id::number(7)}, {.consumer_inexact = true}));
  }
}

TEST(DriverExcuse, OtherRulesAreNeverExplained) {
  const DriverFacts everything{.legacy_implementation = true,
                               .ruleset = RulesetId::kLegacy,
                               .corrupted_on_wire = true,
                               .consumer_corrupted = true,
                               .consumer_inexact = true,
                               .any_consumer_corrupted = true};
  EXPECT_FALSE(excused(RuleId::kK4, Settle{.cmd = Id::number(7)}, everything));
  EXPECT_FALSE(excused(RuleId::kE3, Quiescent{.consumer = 0}, everything));
}

}  // namespace
}  // namespace permitcheck::spec
