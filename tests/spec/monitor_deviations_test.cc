// The Monitor's known deviations X1-X6 (spec/monitor_deviations.cc): asserted among
// deviations(), never among violations().
#include "spec/monitor.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/spec/monitor_testing.h"

namespace permitcheck::spec {
namespace {

using namespace monitor_testing;  // NOLINT: the shared shorthands of the monitor's tests

// Known deviations X1-X6: reported apart, never as violations.
// ======================================================================================

// Wire and client together, Q = 16: command 1 of an old broker (field absent) on c1.
Trace old_broker_command(AckSet ack, std::int64_t early_p, PermitSource source) {
  Trace t;
  t.wire_subscribed(std::nullopt)
      .subscribed(1, 16)
      .add(message(1, std::nullopt, ack, 8))
      .add(recv(1, std::nullopt, ack))
      .add(Resolve{.cmd = n(1), .p = early_p, .source = source})
      .add(Corrupt{.cmd = n(1), .stage = FailureStage::kChecksum})
      .add(settle(1, early_p))
      .add(quiescent());
  return t;
}

TEST(MonitorDeviation, X1_OldBrokerCompleteBatchEarlyFailureReturnsOne) {
  const MonitorReport r = check(model(16, 8), old_broker_command({}, 1, PermitSource::kLegacy));
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r);
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX1,
                      {"command 1 field absent (old broker) and checksum failure",
                       "returned the fallback 1 for a debit of 8"}));
  // Quiescence shows the 7 lost permits, explained by X1.
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX1,
                      {"broker available 8 + accumulator 1 = 9", "7 permits lost",
                       "explained by known deviation X1"}));
  EXPECT_THAT(r.violations, Not(Contains(HasRule(RuleId::kX1))));
}

// Legacy rules track no command budget: the fallback an old broker forces is no known
// deviation of theirs (the legacy ruleset's own findings judge that trace).
TEST(MonitorDeviation, X1_IsNoDeviationOfRulesThatTrackNoBudget) {
  const MonitorReport r =
      check(model(16, 8, RulesetId::kLegacy), old_broker_command({}, 1, PermitSource::kLegacy));
  EXPECT_THAT(r.deviations, Not(Contains(HasRule(RuleId::kX1)))) << dump(r);
  const MonitorReport rev_d = check(model(16, 8), old_broker_command({}, 1, PermitSource::kLegacy));
  EXPECT_THAT(rev_d.deviations, Contains(HasRule(RuleId::kX1))) << dump(rev_d);
}

TEST(MonitorDeviation, DecompressionFailureKnowsBAndIsExact) {
  // Decompression fails after metadata: B = 8 is known and returned, nothing is inexact.
  Trace t;
  t.subscribed(1, 16)
      .add(recv(1, std::nullopt))
      .add(Resolve{.cmd = n(1), .p = 1, .source = PermitSource::kLegacy})
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(Resolve{.cmd = n(1), .p = 8, .source = PermitSource::kBatch})
      .add(Corrupt{.cmd = n(1), .stage = FailureStage::kDecompress})
      .add(settle(1, 8))
      .add(quiescent());
  const MonitorReport r = check(client(16, 8), t);
  EXPECT_TRUE(Clean(r));
}

// Only checksum and metadata failures come before B is known: an old broker's decompression
// failure settles B, no fallback, so it is no X1 deviation.
TEST(MonitorDeviation, X1_DecompressionFailureOfAnOldBrokersBatchIsNoFallback) {
  Trace t;
  t.subscribed(1, 16)
      .add(recv(1, std::nullopt))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(Corrupt{.cmd = n(1), .stage = FailureStage::kDecompress})
      .add(settle(1, 8))
      .add(quiescent());
  const MonitorReport r = check(client(16, 8), t);
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r);
  EXPECT_THAT(r.deviations, Not(Contains(HasRule(RuleId::kX1)))) << dump(r);
  EXPECT_THAT(r.deviations, IsEmpty()) << dump(r);
}

TEST(MonitorDeviation, X2_CryptoDiscardOfAPartialRedeliveryReturnsB) {
  Trace t;
  t.subscribed(1, 16)
      .add(recv(1, 3, AckSet::from_indexes({0, 4, 9})))
      .add(Metadata{.cmd = n(1), .batch_size = 10})
      .add(Transfer{.cmd = n(1), .path = TransferPath::kCrypto})
      .add(DirectReturn{.cmd = n(1), .n = 10, .path = "crypto"})
      .add(settle(1, 0))
      .add(quiescent());
  const MonitorReport r = check(client(16, 8), t);
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r);
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX2,
                      {"command 1 crypto DISCARD of a partial redelivery returned B = 10 for "
                       "P = 3 (over-return by 7)"}));
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX2, {"7 permits invented"}));
}

TEST(MonitorDeviation, X3_CryptoFailIsADeviationNotAViolation) {
  const MonitorReport r = check(client(16, 8), crypto_fail());
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r);
  EXPECT_THAT(r.deviations, Contains(HasRule(RuleId::kX3))) << dump(r);
}

TEST(MonitorDeviation, X4_ChunkFailureBranchReturningNothing) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 1))
      .add(Metadata{.cmd = n(1), .batch_size = 1})
      .add(Transfer{.cmd = n(1), .path = TransferPath::kChunk})
      .add(settle(1, 0));
  const MonitorReport r = check(client(), t);
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r);
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX4,
                      {"command 1 (chunk failure branch) returned nothing for P = 1"}));
}

TEST(MonitorDeviation, X5_CustomProcessorReturningOtherThanP) {
  Trace t;
  t.subscribed(1, 16)
      .add(recv(1, 3))
      .add(Transfer{.cmd = n(1), .path = TransferPath::kProcessor})
      .add(DirectReturn{.cmd = n(1), .n = 2, .path = "processor"})
      .add(settle(1, 0))
      .add(quiescent());
  const MonitorReport r = check(client(16, 8), t);
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r);
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX5,
                      {"command 1 custom processor returned 2 for P = 3"}));
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX5, {"1 permit lost"}));
}

TEST(MonitorDeviation, X6_EarlyFailureCountsAckSetBitsBeyondB) {
  const MonitorReport r = check(
      model(16, 8), old_broker_command(AckSet::from_indexes({0, 2, 5, 9}), 4, PermitSource::kAckSet));
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r);
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX6,
                      {"command 1 field absent and checksum failure: counted 4 ack_set bits",
                       "for a debit of 3"}));
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX6, {"1 permit invented"}));
}

// Wire and client: P = 3 of B = 10 redelivered, crypto DISCARD returns B = 10 (X2), and the
// accumulator's 10 are written as a Flow: the broker's available reaches Q + 7.
Trace x2_over_grant_trace() {
  Trace t;
  t.wire_subscribed(std::nullopt)
      .subscribed(1, 16)
      .add(message(1, 3, AckSet::from_indexes({0, 4, 9}), 10))
      .add(recv(1, 3, AckSet::from_indexes({0, 4, 9})))
      .add(Metadata{.cmd = n(1), .batch_size = 10})
      .add(Transfer{.cmd = n(1), .path = TransferPath::kCrypto})
      .add(DirectReturn{.cmd = n(1), .n = 10, .path = "crypto"})
      .add(settle(1, 0))
      .add(flow(10, 1));
  return t;
}

// A known deviation excuses exactly the units it accounts for, on every check that sees its
// effect: the wire over-grant (E2), the stall (E6) and the quiescent balance (E5).
TEST(MonitorDeviation, X2_WireOverGrantFromACryptoDiscardIsTheDeviation) {
  const Trace t = x2_over_grant_trace();
  const MonitorReport r = check(model(16, 8), t);
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r);
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX2,
                      {"Flow of 10 raises the broker's available permits", "to 23, above Q = 16",
                       "over-grant by 7", "explained by known deviation X2"}));
}

TEST(MonitorDeviation, X2_E2_OverGrantBeyondTheDeviationIsStillAViolation) {
  // The same X2 over-return of 7, then one more unit granted out of nowhere: 8 > 7.
  Trace t = x2_over_grant_trace();
  t.add(flow(1));
  const MonitorReport r = check(model(16, 8), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kE2, {"Flow of 1", "to 24, above Q = 16",
                                              "over-grant by 8"}));
}

TEST(MonitorDeviation, X3_StallWhileCryptoFailHoldsEveryUnitIsTheDeviation) {
  // Q = 8, one command of P = 8 held by crypto FAIL: the broker has 0 available at quiescence.
  Trace t;
  t.subscribed(1, 8)
      .add(recv(1, 8))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(Transfer{.cmd = n(1), .path = TransferPath::kCrypto})
      .add(settle(1, 0))
      .add(quiescent());
  const MonitorReport r = check(client(8, 4), t);
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r);
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX3,
                      {"quiescent with broker available 0", "explained by known deviation X3"}));
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX3,
                      {"8 permits lost", "explained by known deviation X3"}));
}

TEST(MonitorDeviation, X4_HeldUnitsExcuseExactlyTheirShortfall) {
  // The chunk failure branch withholds P = 1 (X4); a second command returns its 2 and they are
  // written as a Flow. At quiescence the balance is short by exactly X4's unit.
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 1))
      .add(Metadata{.cmd = n(1), .batch_size = 1})
      .add(Transfer{.cmd = n(1), .path = TransferPath::kChunk})
      .add(settle(1, 0))
      .add(recv(2, 2))
      .add(settle(2, 2))
      .add(flow(2, 1))
      .add(quiescent());
  const MonitorReport lost = check(client(4, 2), t);
  EXPECT_THAT(lost.violations, IsEmpty()) << dump(lost);  // 1 lost = exactly X4's unit
  EXPECT_TRUE(Reports(lost.deviations, RuleId::kX4, {"1 permit lost", "explained"}));
}

// A command is judged complete once: a crypto FAIL (X3) of a command that still owes its
// protocol error (so it stays in flight after it finished) is one X3, however many terminal
// transitions follow.
TEST(MonitorDeviation, X3_AFinishedCommandIsJudgedCompleteOnce) {
  Trace t;
  t.subscribed(1, 16)
      .add(recv(1, std::uint64_t{0}))
      .add(Transfer{.cmd = n(1), .path = TransferPath::kCrypto})
      .add(settle(1, 0))
      .add(settle(1, 0));
  const MonitorReport r = check(client(16, 8), t);
  EXPECT_EQ(std::count_if(r.deviations.begin(), r.deviations.end(),
                          [](const Finding& f) { return f.rule == RuleId::kX3; }), 1)
      << dump(r);
}

// The smallest over-return is excused too: a crypto DISCARD of B = 3 for P = 2 (X2 by 1),
// written back as a Flow of 3, leaves the broker one permit above Q: the deviation, not E2.
TEST(MonitorDeviation, X2_AnOverReturnOfOneExcusesAnOverGrantOfOne) {
  Trace t;
  t.wire_subscribed(std::nullopt)
      .subscribed(1, 16)
      .add(message(1, 2, AckSet::from_indexes({0, 2}), 3))
      .add(recv(1, 2, AckSet::from_indexes({0, 2})))
      .add(Metadata{.cmd = n(1), .batch_size = 3})
      .add(Transfer{.cmd = n(1), .path = TransferPath::kCrypto})
      .add(DirectReturn{.cmd = n(1), .n = 3, .path = "crypto"})
      .add(settle(1, 0))
      .add(flow(3, 1));
  const MonitorReport r = check(model(16, 2), t);
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r);
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX2, {"to 17, above Q = 16", "over-grant by 1",
                                                 "explained by known deviation X2"}));
}

// A deviation that over-returns (X2) accounts for a balance above Q, never for one below it:
// the same X2 over-return of 7, then a MESSAGE of P = 9 the client never receives, leaves the
// balance 2 short at quiescence. That loss is E5, not the deviation.
TEST(MonitorDeviation, E5_AnOverReturningDeviationDoesNotExcuseALoss) {
  Trace t = x2_over_grant_trace();
  t.add(message(2, 9, {}, 9)).add(quiescent());
  const MonitorReport r = check(model(16, 8), t);
  EXPECT_TRUE(Reports(r.violations, RuleId::kE5,
                      {"at quiescence: broker available 14 + accumulator 0 = 14, expected Q = 16",
                       "2 permits lost", "known deviation X2 accounts for 7 of it"}))
      << dump(r);
}

// Two known deviations of opposite sign on one incarnation: X2 over-returns 2 (B = 3 for P = 1)
// and X4 withholds 2 (a chunk failure of P = 2), so the units they account for net to 0. Only a
// deviation that withholds units excuses a stall (E6): a net of 0 withholds nothing, so the
// stall with the broker at 0 available and the client holding all Q = 4 is reported.
TEST(MonitorDeviation, E6_DeviationsThatCancelOutDoNotExcuseAStall) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 1, AckSet::from_indexes({2})))
      .add(Metadata{.cmd = n(1), .batch_size = 3})
      .add(Transfer{.cmd = n(1), .path = TransferPath::kCrypto})
      .add(DirectReturn{.cmd = n(1), .n = 3, .path = "crypto"})
      .add(settle(1, 0))
      .add(recv(2, 2))
      .add(Metadata{.cmd = n(2), .batch_size = 2})
      .add(Transfer{.cmd = n(2), .path = TransferPath::kChunk})
      .add(settle(2, 0))
      .add(recv(3, 1))
      .add(settle(3, 1))
      .add(quiescent());
  const MonitorReport r = check(client(4, 4), t);
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX2, {"over-return by 2"})) << dump(r);
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX4, {"returned nothing for P = 2"})) << dump(r);
  EXPECT_TRUE(Reports(r.violations, RuleId::kE6, {"quiescent with broker available 0", "stalled"}))
      << dump(r);
  EXPECT_THAT(r.deviations, Not(Contains(Field(&Finding::explanation, ::testing::HasSubstr("is quiescent")))))
      << dump(r);
}

}  // namespace
}  // namespace permitcheck::spec
