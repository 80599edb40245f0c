// Which known bug a finding is an instance of (spec/bug_signature.h), as the properties
// harness asks: each row's known instance names it, the same finding without the fact that
// makes it one names nothing.
#include "spec/bug_signature.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace permitcheck::spec {
namespace {

const Finding kAt{RuleId::kE1, 9, "..."};

Finding finding_of(RuleId rule) { return Finding{rule, 9, "..."}; }

std::string legacy_row(RuleId rule, const Event& e, const DriverFacts& d, bool deviation = false) {
  DriverFacts legacy = d;
  legacy.legacy_implementation = true;
  return legacy_signature(finding_of(rule), deviation, e, legacy).value_or("none");
}

std::string review_row(RuleId rule, const Event& e, const DriverFacts& d) {
  return review_signature(finding_of(rule), e, d).value_or("none");
}

Send send_with(bool admitted, std::optional<DispatcherKind> dispatcher) {
  Send s{.consumer = 0, .dispatcher = dispatcher};
  s.entries.push_back(SentEntry{.cmd = Id::number(3), .entry = SendEntry{.admitted = admitted}});
  return s;
}

TEST(BugSignature, L1_L2_L3_L4_TheInjectedStageOfAC7SettleNamesTheRow) {
  const Settle settle{.cmd = Id::number(7)};
  EXPECT_EQ(legacy_row(RuleId::kC7, settle, {.injected_stage = FailureStage::kChecksum}), "L1");
  EXPECT_EQ(legacy_row(RuleId::kC7, settle, {.injected_stage = FailureStage::kMetadata}), "L2");
  EXPECT_EQ(legacy_row(RuleId::kC7, settle, {.injected_stage = FailureStage::kDecompress}), "L3");
  EXPECT_EQ(legacy_row(RuleId::kC7, settle, {.injected_stage = FailureStage::kBatch}), "L4");
  EXPECT_EQ(legacy_row(RuleId::kC7, settle, {.injected_stage = FailureStage::kInconsistent}), "none");
  EXPECT_EQ(legacy_row(RuleId::kC7, settle, {}), "none");
  // A rewritten wire value is the injected fault's effect, no legacy bug's.
  EXPECT_EQ(legacy_row(RuleId::kC7, settle,
                       {.injected_stage = FailureStage::kChecksum, .corrupted_on_wire = true}),
            "none");
}

TEST(BugSignature, L5_APartialBatchWhoseParseFailsUnderK7OrE2) {
  const Settle settle{.cmd = Id::number(7)};
  EXPECT_EQ(legacy_row(RuleId::kK7, settle, {.injected_stage = FailureStage::kBatch}), "L5");
  EXPECT_EQ(legacy_row(RuleId::kE2, settle, {.injected_stage = FailureStage::kBatch}), "L5");
  EXPECT_EQ(legacy_row(RuleId::kK7, settle, {.injected_stage = FailureStage::kChecksum}), "none");
}

TEST(BugSignature, L6_L7_AnE3ReturnAfterAStaleEpochDiscardOrNot) {
  const MsgReturn ret{.msg = Id::text("m1")};
  const Event discard = Extension{.ev = "x-stale-epoch-discard"};
  const Event other = Extension{.ev = "x-other"};
  EXPECT_EQ(legacy_row(RuleId::kE3, ret, {.previous = &discard}), "L6");
  EXPECT_EQ(legacy_row(RuleId::kE3, ret, {.previous = &other}), "L7");
  EXPECT_EQ(legacy_row(RuleId::kE3, ret, {}), "L7");
  EXPECT_EQ(legacy_row(RuleId::kE3, Settle{.cmd = Id::number(7)}, {}), "none");
}

TEST(BugSignature, L8_AnUnadmittedEntryDebitedUnderB4OrB6) {
  EXPECT_EQ(legacy_row(RuleId::kB4, send_with(false, std::nullopt), {}), "L8");
  EXPECT_EQ(legacy_row(RuleId::kB6, send_with(false, std::nullopt), {}), "L8");
  EXPECT_EQ(legacy_row(RuleId::kB4, send_with(true, std::nullopt), {}), "none");
}

TEST(BugSignature, L9_L10_L11_BeforeStartCryptoDiscardAndQueuedFlow) {
  EXPECT_EQ(legacy_row(RuleId::kK4, Settle{.cmd = Id::number(7)}, {.before_start = true}), "L9");
  EXPECT_EQ(legacy_row(RuleId::kK4, Settle{.cmd = Id::number(7)}, {}), "none");
  // L10 is a known deviation (X2) of a direct return; the same rule as a violation is not.
  EXPECT_EQ(legacy_row(RuleId::kX2, DirectReturn{.cmd = Id::number(7)}, {}, /*deviation=*/true), "L10");
  EXPECT_EQ(legacy_row(RuleId::kX1, DirectReturn{.cmd = Id::number(7)}, {}, /*deviation=*/true), "none");
  EXPECT_EQ(legacy_row(RuleId::kN6, Flow{.consumer = 0, .permits = 5}, {}), "L11");
  EXPECT_EQ(legacy_row(RuleId::kN6, Settle{.cmd = Id::number(7)}, {}), "none");
}

TEST(BugSignature, F1_ADirectReturnBesideADrainingBudgetWithoutAnInjectedFault) {
  const Settle settle{.cmd = Id::number(7)};
  for (RuleId rule : {RuleId::kK5, RuleId::kK6, RuleId::kK7, RuleId::kE1, RuleId::kE2}) {
    EXPECT_EQ(review_row(rule, settle, {.direct_return = true}), "F1") << rule_name(rule);
  }
  EXPECT_EQ(review_row(RuleId::kE1, DirectReturn{.cmd = Id::number(7)}, {.direct_return = true}), "F1");
  EXPECT_EQ(review_row(RuleId::kE1, settle, {}), "none");
  EXPECT_EQ(review_row(RuleId::kE1, settle,
                       {.injected_stage = FailureStage::kChecksum, .direct_return = true}),
            "none");
  EXPECT_EQ(review_row(RuleId::kE1, settle, {.corrupted_on_wire = true, .direct_return = true}), "none");
  // A legacy signature of a revision's run is its review finding.
  EXPECT_EQ(legacy_signature(kAt, false, settle, {.direct_return = true}).value_or("none"), "F1");
  EXPECT_EQ(legacy_signature(kAt, true, settle, {.direct_return = true}).value_or("none"), "none");
}

TEST(BugSignature, F2_AStickyKeyAggregateDebitedBeforeAdmission) {
  EXPECT_EQ(review_row(RuleId::kB6, send_with(false, DispatcherKind::kPersistentKeyShared), {}), "F2");
  EXPECT_EQ(review_row(RuleId::kB6, send_with(true, DispatcherKind::kPersistentKeyShared), {}), "none");
  EXPECT_EQ(review_row(RuleId::kB6, send_with(false, DispatcherKind::kPersistentShared), {}), "none");
}

TEST(BugSignature, F3_ADeadLetterMessageObjectReleasedAtSkip) {
  EXPECT_EQ(review_row(RuleId::kS5, Extension{.ev = std::string(kSkipReleaseEvent)}, {}), "F3");
  EXPECT_EQ(review_row(RuleId::kS5, Extension{.ev = "x-other"}, {}), "none");
}

TEST(BugSignature, F4_AProtocolErrorCloseThatEndedIncarnationsButNotAnN7Overflow) {
  const ProtocolError bad{.cnx = Id::text("c1"), .reason = "bad message_permits"};
  EXPECT_EQ(review_row(RuleId::kC5, bad, {.consumers_ended_by_close = 1}), "F4");
  EXPECT_EQ(review_row(RuleId::kC6, bad, {.consumers_ended_by_close = 2}), "F4");
  EXPECT_EQ(review_row(RuleId::kC5, bad, {}), "none");
  const ProtocolError overflow{.cnx = Id::text("c1"), .reason = std::string(kAccumulatorOverflowReason)};
  EXPECT_EQ(review_row(RuleId::kC5, overflow, {.consumers_ended_by_close = 1}), "none");
}

TEST(BugSignature, F5_AnE3ReturnOnTheReplacementsOwnConnection) {
  const MsgReturn ret{.msg = Id::text("m1")};
  EXPECT_EQ(review_row(RuleId::kE3, ret, {.returned_on_current_connection = true}), "F5");
  EXPECT_EQ(review_row(RuleId::kE3, ret, {}), "none");
}

}  // namespace
}  // namespace permitcheck::spec
