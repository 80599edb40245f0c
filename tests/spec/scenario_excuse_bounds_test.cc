// The conformance judge's fallback excuse (spec/scenario_verdict.h field_absent_excuse) has
// both bounds under test, at each way a run is measured: a shortfall below what the fallback
// loses is not the deviation (the client returned more than the fallback allows: something
// else), one above it (beyond an old client's slack) is not either (E5/E6 stand). Issue 33:
// the excuse had no upper bound under test, so a judge excusing any loss would have passed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "spec/plain_text.h"
#include "spec/scenario_verdict.h"

namespace permitcheck::spec {
namespace scenario_excuse_bounds {

using ::testing::HasSubstr;

// An old broker's complete batch of P = 8 (the fallback returns 1: 7 short) beside a partial
// one of P = 5 with 3 ack_set bits (returns 3: 2 short): 9 short in all, under X6.
FieldAbsent two_entries(bool old_client) {
  return FieldAbsent{.entries = {{.name = "b8", .p = 8, .ack_set = AckSet()},
                                 {.name = "b8 (partial)", .p = 5, .ack_set = AckSet({7})}},
                     .old_client = old_client};
}

TEST(ScenarioExcuseBounds, X1_X6_AMeasuredShortfallIsExcusedOnlyFromTheAllowanceToItPlusTheSlack) {
  for (std::int64_t slack : {0, 4}) {
    const FieldAbsent f = two_entries(slack > 0);
    for (std::int64_t short_by = 7; short_by <= 15; ++short_by) {
      const std::optional<Excuse> e = field_absent_excuse(
          f, {.ran = true, .measured = true, .delta = -short_by, .text = "d", .slack = slack});
      const bool excused = short_by >= 9 && short_by <= 9 + slack;
      EXPECT_EQ(e.has_value(), excused) << "slack " << slack << ", " << short_by << " short";
      if (e) {
        EXPECT_EQ(e->rule, RuleId::kX6);
        EXPECT_THAT(e->text, HasSubstr("the fallback allows 4 returned, 9 permits short"));
        EXPECT_THAT(e->text, HasSubstr("measured " + std::to_string(short_by) + " permits short"));
      }
    }
    // A surplus is never a fallback's loss.
    EXPECT_EQ(field_absent_excuse(f, {.ran = true, .measured = true, .delta = 9, .slack = slack}),
              std::nullopt);
  }
  // Complete batches only: X1.
  const FieldAbsent complete{.entries = {{.name = "b8", .p = 8}, {.name = "b4", .p = 4}}};
  const std::optional<Excuse> x1 =
      field_absent_excuse(complete, {.ran = true, .measured = true, .delta = -10, .text = "d"});
  ASSERT_TRUE(x1.has_value());
  EXPECT_EQ(x1->rule, RuleId::kX1);
  EXPECT_THAT(x1->text, HasSubstr("the fallback allows 2 returned, 10 permits short; the drain "
                                  "measured 10 permits short, 2 returned (d)"));
  EXPECT_EQ(field_absent_excuse(complete, {.ran = true, .measured = true, .delta = -9}), std::nullopt);
  EXPECT_EQ(field_absent_excuse(complete, {.ran = true, .measured = true, .delta = -11}), std::nullopt);
}

// A drain that could only bound the shortfall (not measured): excused when the allowance lies
// within [short_min, short_max], both ends included, and not one past either.
TEST(ScenarioExcuseBounds, X6_AnUnmeasuredShortfallIsExcusedOnlyWhenItsBoundsHoldTheAllowance) {
  const FieldAbsent f = two_entries(false);
  auto bounded = [&](std::int64_t lo, std::int64_t hi) {
    return field_absent_excuse(
        f, {.ran = true, .measured = false, .short_min = lo, .short_max = hi, .text = "d"});
  };
  EXPECT_TRUE(bounded(9, 9).has_value());
  EXPECT_TRUE(bounded(5, 9).has_value());
  EXPECT_TRUE(bounded(9, 12).has_value());
  EXPECT_FALSE(bounded(10, 12).has_value());
  EXPECT_FALSE(bounded(5, 8).has_value());
  const std::optional<Excuse> e = bounded(-2, 9);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->rule, RuleId::kX6);
  EXPECT_THAT(e->text, HasSubstr("the drain measured 0 to 9 permits short (d)"));
  // No drain ran and none measured: no excuse without a T to decide by.
  EXPECT_FALSE(field_absent_excuse(f, {.ran = false}).has_value());
}

// With no drain, the quiescence bound decides: the permits left unrequested once the
// fallback's loss is counted must be 0 to T - 1; T or more, or fewer than 0, is no excuse.
TEST(ScenarioExcuseBounds, X1_WithNoDrainTheUnrequestedPermitsMustBeFrom0ToTMinus1) {
  // Q = 20, all granted, P = 8 loses 7: Q - (granted - debited) - 7 = debited - 7 unrequested.
  for (std::int64_t acc = -2; acc <= 6; ++acc) {
    const FieldAbsent gone{.entries = {{.name = "b8", .p = 8}}, .t = 5, .q = 20,
                           .granted = 20, .debited = acc + 7};
    const std::optional<Excuse> e = field_absent_excuse(gone, {.ran = false});
    EXPECT_EQ(e.has_value(), acc >= 0 && acc < 5) << acc;
    if (e) {
      EXPECT_EQ(e->rule, RuleId::kX1);
      EXPECT_THAT(e->text, HasSubstr("with the fallback's loss " + count_noun(acc, "permit") +
                                     " unrequested, below T = 5"));
    }
  }
}

// The drain's own finding at its edges: a surplus of 1 is too many (E2), a shortfall one past
// an old client's slack is too few (E5), a shortfall of exactly the slack is none.
TEST(ScenarioExcuseBounds, E2_E5_TheDrainsFindingAtOnePermitEitherWay) {
  std::vector<std::string> rows;
  const std::optional<Finding> e2 = drain_verdict(
      {}, {.ran = true, .measured = true, .delta = 1, .text = "d", .scenario = "s"}, rows);
  ASSERT_TRUE(e2.has_value());
  EXPECT_EQ(e2->rule, RuleId::kE2);
  EXPECT_EQ(e2->explanation, "the client returned 1 permit too many in s (d)");
  const std::optional<Finding> e5 = drain_verdict(
      {}, {.ran = true, .measured = true, .delta = -5, .text = "d", .slack = 4, .scenario = "s"},
      rows);
  ASSERT_TRUE(e5.has_value());
  EXPECT_EQ(e5->rule, RuleId::kE5);
  EXPECT_EQ(e5->explanation, "the client returned 1 to 5 permits too few in s (d)");
  EXPECT_EQ(drain_verdict({}, {.ran = true, .measured = true, .delta = -4, .slack = 4}, rows),
            std::nullopt);
  EXPECT_TRUE(rows.empty());
}

}  // namespace scenario_excuse_bounds
}  // namespace permitcheck::spec
