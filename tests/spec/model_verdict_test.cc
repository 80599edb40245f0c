// The verdicts of the model-based check (spec/model_verdict.h), as the properties' SpecModel
// calls them: a disagreement between implementation and model names its rule; agreement, or a
// rule the ruleset does not promise, gives nothing.
#include "spec/model_verdict.h"

#include <optional>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace permitcheck::spec {
namespace {

using ::testing::HasSubstr;

std::string model_rule_of(const std::optional<Finding>& f) {
  return f ? std::string(rule_name(f->rule)) : "none";
}

TEST(ModelVerdict, B12_ASendStartsOnlyWhilePermitsAndTheAggregateArePositive) {
  const std::optional<Finding> b12 = send_start_verdict(RulesetId::kRevD, "b1", 0);
  EXPECT_EQ(model_rule_of(b12), "B12");
  EXPECT_EQ(b12->explanation, "B12: broker consumer b1 was sent to with 0 available permits (a "
                              "send starts only while they are positive)");
  EXPECT_EQ(send_start_verdict(RulesetId::kRevD, "b1", 1), std::nullopt);
  EXPECT_EQ(send_start_verdict(RulesetId::kLegacy, "b1", 0), std::nullopt);  // no such promise
  const std::optional<Finding> round = round_start_verdict(RulesetId::kRevD, "b1", "shared", -2);
  EXPECT_EQ(model_rule_of(round), "B12");
  EXPECT_THAT(round->explanation, HasSubstr("while the shared aggregate was -2"));
  EXPECT_EQ(round_start_verdict(RulesetId::kRevD, "b1", "shared", 1), std::nullopt);
  EXPECT_EQ(round_start_verdict(RulesetId::kLegacy, "b1", "shared", 0), std::nullopt);
}

TEST(ModelVerdict, C7_K5_K2_C4_ACommandDoesWhatTheSpecificationsRunOfItDoes) {
  EXPECT_EQ(failure_record_verdict(3, {0}, {0}), std::nullopt);
  const std::optional<Finding> c7 = failure_record_verdict(3, {0, 1}, {0});
  EXPECT_EQ(model_rule_of(c7), "C7");
  EXPECT_EQ(c7->explanation, "command 3 recorded 2 failures; the specification records 1");

  EXPECT_EQ(command_return_verdict(3, 4, 4), std::nullopt);
  const std::optional<Finding> k5 = command_return_verdict(3, 1, 4);
  EXPECT_EQ(model_rule_of(k5), "K5");
  EXPECT_THAT(k5->explanation, HasSubstr("command 3 returned 1 by itself (direct + terminal); "
                                         "the specification returns 4"));

  EXPECT_EQ(handoff_verdict(3, {"m1"}, {"m1"}), std::nullopt);
  const std::optional<Finding> k2 = handoff_verdict(3, {"m1"}, {"m1", "m2"});
  EXPECT_EQ(model_rule_of(k2), "K2");
  EXPECT_EQ(k2->explanation, "command 3 handed off {m1}; the specification hands off {m1,m2}");

  EXPECT_EQ(connection_close_verdict(3, true, false, true), std::nullopt);
  EXPECT_EQ(connection_close_verdict(3, false, true, true), std::nullopt);  // N7's overflow
  EXPECT_EQ(connection_close_verdict(3, false, false, false), std::nullopt);
  const std::optional<Finding> must = connection_close_verdict(3, true, false, false);
  EXPECT_EQ(model_rule_of(must), "C4");
  EXPECT_EQ(must->explanation, "command 3 must close its connection (protocol error)");
  EXPECT_THAT(connection_close_verdict(3, false, false, true)->explanation,
              HasSubstr("must not close"));
}

TEST(ModelVerdict, B11_B4_B5_B6_TheBrokerStateIsTheModels) {
  EXPECT_EQ(unknown_broker_consumer_finding("b9").rule, RuleId::kB11);
  EXPECT_EQ(unknown_broker_consumer_finding("b9").explanation,
            "broker consumer b9 is unknown to the specification");
  EXPECT_EQ(model_rule_of(removed_broker_consumer_verdict("b2", true, false)), "B11");
  EXPECT_EQ(removed_broker_consumer_verdict("b2", true, true), std::nullopt);
  EXPECT_EQ(removed_broker_consumer_verdict("b2", false, false), std::nullopt);
  EXPECT_EQ(model_rule_of(available_verdict("b2", -3, 1)), "B4");
  EXPECT_EQ(available_verdict("b2", -3, 1)->explanation,
            "broker consumer b2 available: implementation -3, specification 1");
  EXPECT_EQ(available_verdict("b2", 1, 1), std::nullopt);
  EXPECT_EQ(model_rule_of(unacked_verdict("b2", 5, 4)), "B5");
  EXPECT_EQ(unacked_verdict("b2", 4, 4), std::nullopt);
  EXPECT_EQ(model_rule_of(aggregate_verdict(7, 6)), "B6");
  EXPECT_THAT(aggregate_verdict(7, 6)->explanation,
              HasSubstr("implementation 7, specification (sum over live consumers) 6"));
  EXPECT_EQ(aggregate_verdict(6, 6), std::nullopt);
}

TEST(ModelVerdict, N1_N5_TheClientsIncarnationAndAccumulatorAreTheModels) {
  EXPECT_EQ(current_incarnation_verdict(0, 2, 2), std::nullopt);
  EXPECT_EQ(current_incarnation_verdict(0, std::nullopt, std::nullopt), std::nullopt);
  const std::optional<Finding> n1 = current_incarnation_verdict(0, std::nullopt, 2);
  EXPECT_EQ(model_rule_of(n1), "N1");
  EXPECT_EQ(n1->explanation,
            "consumer 0 current incarnation: implementation none, specification 2");
  EXPECT_EQ(accumulator_verdict(0, 2, 3, 3), std::nullopt);
  const std::optional<Finding> n5 = accumulator_verdict(0, 2, 4, 3);
  EXPECT_EQ(model_rule_of(n5), "N5");
  EXPECT_EQ(n5->explanation,
            "consumer 0 incarnation 2 accumulator: implementation 4, specification 3");
}

}  // namespace
}  // namespace permitcheck::spec
