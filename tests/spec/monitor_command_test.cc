// The Monitor on one command (spec/monitor_command.cc): C1-C7, K1-K8, S1-S3, each broken and
// done right.
#include "spec/monitor.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidcheck.h"
#include "rapidcheck/gtest.h"
#include "tests/spec/monitor_testing.h"

namespace permitcheck::spec {
namespace {

using namespace monitor_testing;  // NOLINT: the shared shorthands of the monitor's tests

// ======================================================================================
// Client accounting: C1-C7 (resolution and validation).
// ======================================================================================

TEST(MonitorClient, C2_EarlyResolutionMismatchIsReported) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 3, AckSet({37})))
      .add(Resolve{.cmd = n(1), .p = 1, .source = PermitSource::kLegacy});
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kC2,
                             {"command 1 resolved P = 1 from legacy",
                              "the ladder gives 3 from explicit"}));
  // Field absent, B unknown: every ack_set bit counts (X6), bit 9 included.
  Trace absent;
  absent.subscribed(1, 4)
      .add(recv(1, std::nullopt, AckSet::from_indexes({0, 2, 5, 9})))
      .add(Resolve{.cmd = n(1), .p = 3, .source = PermitSource::kAckSet});
  EXPECT_TRUE(FirstViolation(check(client(), absent), RuleId::kC2,
                             {"resolved P = 3 from ack_set", "gives 4 from ack_set"}));
}

TEST(MonitorClient, C1_LadderMismatchAfterMetadataIsReported) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 3, AckSet({37})))
      .add(Resolve{.cmd = n(1), .p = 3, .source = PermitSource::kExplicit})
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(Resolve{.cmd = n(1), .p = 3, .source = PermitSource::kAckSet});
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kC1,
                             {"resolved P = 3 from ack_set", "the ladder gives 3 from explicit"}));
  Trace absent;  // field absent, B = 8 known: the bounded popcount, bit 9 ignored
  absent.subscribed(1, 4)
      .add(recv(1, std::nullopt, AckSet::from_indexes({0, 2, 5, 9})))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(Resolve{.cmd = n(1), .p = 4, .source = PermitSource::kAckSet});
  EXPECT_TRUE(FirstViolation(check(client(), absent), RuleId::kC1,
                             {"resolved P = 4 from ack_set", "gives 3 from ack_set"}));
}

TEST(MonitorClient, LadderFollowedIsFine) {
  Trace t;
  t.subscribed(1, 16)
      .add(recv(1, 3, AckSet({37})))
      .add(Resolve{.cmd = n(1), .p = 3, .source = PermitSource::kExplicit})
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(Resolve{.cmd = n(1), .p = 3, .source = PermitSource::kExplicit})
      .add(settle(1, 3))
      .add(recv(2, std::nullopt))
      .add(Resolve{.cmd = n(2), .p = 1, .source = PermitSource::kLegacy})
      .add(Metadata{.cmd = n(2), .batch_size = 2})
      .add(Resolve{.cmd = n(2), .p = 2, .source = PermitSource::kBatch})
      .add(settle(2, 2));
  EXPECT_TRUE(Clean(check(client(16, 8), t)));
}

TEST(MonitorClient, C3_ClaimAfterFailedValidationIsReported) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 3))
      .add(Metadata{.cmd = n(1), .batch_size = 8})  // explicit 3, complete batch of 8
      .add(claim(1, "m0", 0));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kC3,
                             {"command 1 hands off message m0 although validation failed",
                              "explicit 3 != expected 8"}));
}

TEST(MonitorClient, FailedValidationSettlesWithoutHandOff) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 3))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(Resolve{.cmd = n(1), .p = 3, .source = PermitSource::kExplicit})
      .add(Corrupt{.cmd = n(1), .stage = FailureStage::kInconsistent})
      .add(settle(1, 3));
  EXPECT_TRUE(Clean(check(client(), t)));
}

TEST(MonitorClient, C4_ProcessingAnOutOfRangeExplicitValueIsReported) {
  for (std::uint64_t bad : {std::uint64_t{0}, kTwoTo31, kTwoTo32Minus1}) {
    SCOPED_TRACE(bad);
    const std::string value = "message_permits = " + std::to_string(bad);
    Trace metadata;
    metadata.subscribed(1, 4).add(recv(1, bad)).add(Metadata{.cmd = n(1), .batch_size = 1});
    EXPECT_TRUE(FirstViolation(check(client(), metadata), RuleId::kC4,
                               {"command 1 has " + value, "but was processed"}));
    Trace handed;
    handed.subscribed(1, 4).add(recv(1, bad)).add(claim(1, "m0", 0));
    EXPECT_TRUE(FirstViolation(check(client(), handed), RuleId::kC4,
                               {value, "handed off message m0"}));
    Trace settled;
    settled.subscribed(1, 4).add(recv(1, bad)).add(settle(1, 1));
    EXPECT_TRUE(FirstViolation(check(client(), settled), RuleId::kC4,
                               {value, "settles 1 permit", "no credit"}));
    Trace direct;
    direct.subscribed(1, 4).add(recv(1, bad)).add(DirectReturn{.cmd = n(1), .n = 1});
    EXPECT_TRUE(FirstViolation(check(client(), direct), RuleId::kC4,
                               {value, "returns 1 permit"}));
    Trace corrupt;
    corrupt.subscribed(1, 4)
        .add(recv(1, bad))
        .add(Corrupt{.cmd = n(1), .stage = FailureStage::kChecksum});
    EXPECT_TRUE(FirstViolation(check(client(), corrupt), RuleId::kC4,
                               {value, "treated as corrupted data"}));
  }
}

// C4 is reported once per command: a second hand-off of the same out-of-range command is not
// a second C4 (the protocol error was already due at the first).
// Processing an out-of-range command is its C4; quiescence then owes no second C4 for the
// connection that was never closed.
TEST(MonitorClient, C4_OutOfRangeCommandProcessedIsReportedOnceThroughQuiescence) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, std::uint64_t{0}))
      .add(Metadata{.cmd = n(1), .batch_size = 1})
      .add(quiescent());
  const MonitorReport r = check(client(), t);
  EXPECT_THAT(r.violations, Contains(HasRule(RuleId::kC4)).Times(1)) << dump(r);
  EXPECT_TRUE(FirstViolation(r, RuleId::kC4, {"but was processed"}));
}

TEST(MonitorClient, C4_OutOfRangeCommandHandingOffTwoMessagesIsReportedOnce) {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 0)).add(claim(1, "m0", 0)).add(claim(1, "m1", 1));
  const MonitorReport r = check(client(), t);
  EXPECT_THAT(r.violations, Contains(HasRule(RuleId::kC4)).Times(1)) << dump(r);
  EXPECT_TRUE(FirstViolation(r, RuleId::kC4, {"message_permits = 0", "handed off message m0"}));
}

TEST(MonitorClient, ProtocolErrorIsTheCorrectOutcome) {
  for (std::uint64_t bad : {std::uint64_t{0}, kTwoTo31, kTwoTo32Minus1}) {
    SCOPED_TRACE(bad);
    Trace t;
    t.subscribed(1, 4)
        .add(recv(1, bad))
        .add(Resolve{.cmd = n(1), .p = 1, .source = PermitSource::kLegacy})
        .add(ProtocolError{.cnx = s("c1"), .reason = "message_permits out of range"})
        .add(IncClose{.inc = n(1), .reason = CloseReason::kProtocolError});
    const MonitorReport r = check(client(), t);
    EXPECT_TRUE(Clean(r));
    EXPECT_THAT(r.deviations, IsEmpty()) << dump(r);
  }
}

// The protocol error C4 asks for, once raised, settles the command: events the client still
// logs for it afterwards are not a second C4.
TEST(MonitorClient, C4_ACommandWhoseProtocolErrorWasRaisedIsNotReportedAgain) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, std::uint64_t{0}))
      .add(ProtocolError{.cnx = s("c1"), .reason = "message_permits out of range"})
      .add(Metadata{.cmd = n(1), .batch_size = 1});
  const MonitorReport r = check(client(), t);
  EXPECT_THAT(r.violations, Not(Contains(HasRule(RuleId::kC4)))) << dump(r);
  Trace unraised;
  unraised.subscribed(1, 4)
      .add(recv(1, std::uint64_t{0}))
      .add(Metadata{.cmd = n(1), .batch_size = 1});
  EXPECT_THAT(check(client(), unraised).violations, Contains(HasRule(RuleId::kC4)));
}

// How many findings of `rule` a report holds.
std::size_t count_rule(const MonitorReport& r, RuleId rule) {
  return static_cast<std::size_t>(std::count_if(
      r.violations.begin(), r.violations.end(), [rule](const Finding& f) { return f.rule == rule; }));
}

// An out-of-range value's C4 is reported once: at the first quiescence, not again at the next
// or at the end of the trace; once at its Corrupt, not again at its Metadata.
TEST(MonitorClient, C4_AnOutOfRangeValueIsReportedOnceWhereverItIsNoticed) {
  Trace quiet;
  quiet.subscribed(1, 4).add(recv(1, std::uint64_t{0})).add(quiescent()).add(quiescent());
  EXPECT_EQ(count_rule(check(client(), quiet), RuleId::kC4), 1u) << dump(check(client(), quiet));
  Trace corrupt;
  corrupt.subscribed(1, 4)
      .add(recv(1, std::uint64_t{0}))
      .add(Corrupt{.cmd = n(1), .stage = FailureStage::kChecksum})
      .add(Metadata{.cmd = n(1), .batch_size = 1});
  const MonitorReport r = check(client(), corrupt);
  EXPECT_EQ(count_rule(r, RuleId::kC4), 1u) << dump(r);
  EXPECT_TRUE(Reports(r.violations, RuleId::kC4, {"treated as corrupted data"}));
}

// A command whose value is out of range is resolved by no ladder (C4 decides it): a Resolve
// for it is neither C1 nor C2, whatever it says.
TEST(MonitorClient, C1_C2_AResolveOfAnOutOfRangeCommandIsNotJudgedByTheLadder) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, std::uint64_t{0}))
      .add(Resolve{.cmd = n(1), .p = 7, .source = PermitSource::kExplicit});
  const MonitorReport r = check(client(), t);
  EXPECT_EQ(count_rule(r, RuleId::kC1) + count_rule(r, RuleId::kC2), 0u) << dump(r);
}

// A connection closed while one of its commands owes a C4 protocol error is that error: a
// command with inconsistent data on the same connection does not make it a C5.
TEST(MonitorClient, C5_AConnectionClosedForAnOutOfRangeValueIsNotBlamedOnInconsistentData) {
  auto trace = [](bool out_of_range_too) {
    Trace t;
    t.subscribed(1, 16).add(recv(1, 3)).add(Metadata{.cmd = n(1), .batch_size = 8});
    if (out_of_range_too) t.add(recv(2, std::uint64_t{0}));
    t.add(ProtocolError{.cnx = s("c1"), .reason = "closed"});
    return t;
  };
  const MonitorReport with_c4 = check(client(16, 8), trace(true));
  EXPECT_EQ(count_rule(with_c4, RuleId::kC5), 0u) << dump(with_c4);
  EXPECT_TRUE(Reports(check(client(16, 8), trace(false)).violations, RuleId::kC5,
                      {"closed (closed) over inconsistent data"}));
}

// A restored message is no longer outstanding, and restoring a settled command's last
// message finishes it (E1 judged then).
TEST(MonitorClient, M1_E1_ARestoredMessageIsNotOutstandingAndItsCommandCanFinish) {
  Trace t = settled_with_message_out();
  t.add(Restore{.cmd = n(1), .msg = s("m0")});
  const MonitorReport finished = check(client(), t);
  EXPECT_TRUE(Reports(finished.violations, RuleId::kE1,
                      {"command 1 finished having returned 0 of its P = 1"}));
  t.add(msg_return("m0"));
  EXPECT_TRUE(Reports(check(client(), t).violations, RuleId::kM1,
                      {"message m0 returned but never handed off"}));
}

TEST(MonitorClient, LegacyClientDoesNotReadTheField) {
  Trace t;
  t.subscribed(1, 4, "c1")
      .add(recv(1, 0))
      .add(Metadata{.cmd = n(1), .batch_size = 1})
      .add(claim(1, "m0", 0))
      .add(settle(1, 0))
      .add(msg_return("m0"));
  EXPECT_TRUE(Clean(check(client(4, 2, RulesetId::kLegacy), t)));
}

TEST(MonitorClient, C4_OutOfRangeValueNeverFollowedByProtocolErrorIsReported) {
  // The client neither processes the command nor closes the connection: it just drops it.
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 0))
      .add(Resolve{.cmd = n(1), .p = 1, .source = PermitSource::kLegacy})
      .add(settle(1, 0));
  // At the end of the trace (finish) and at quiescence alike.
  const MonitorReport at_end = check(client(), t);
  EXPECT_TRUE(FirstViolation(at_end, RuleId::kC4, {"message_permits = 0", "never closed"}));
  Trace q = t;
  q.add(quiescent());
  const MonitorReport at_quiescence = check(client(), q);
  EXPECT_TRUE(FirstViolation(at_quiescence, RuleId::kC4, {"message_permits = 0"}));
}

TEST(MonitorClient, C5_SettleShortfallAfterInconsistentDataIsReported) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 3))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(Corrupt{.cmd = n(1), .stage = FailureStage::kInconsistent})
      .add(settle(1, 1));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kC5,
                             {"command 1 returned 1 permit when it finished (its terminal "
                              "transition) where the rule returns 3",
                              "failed at inconsistent", "2 permits lost"}));
}

TEST(MonitorClient, C5_ClosingTheConnectionOverInRangeInconsistentDataIsReported) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 3))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(ProtocolError{.cnx = s("c1"), .reason = "inconsistent"});
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kC5,
                             {"connection c1 closed (inconsistent) over inconsistent data"}));
}

TEST(MonitorClient, C6_ClosingTheConnectionWithTheFieldAbsentIsReported) {
  // Field absent, ack_set bits only beyond B: decision 2, corrupted data, never a close.
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, std::nullopt, AckSet::from_indexes({9})))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(ProtocolError{.cnx = s("c1"), .reason = "ambiguous"});
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kC6,
                             {"connection c1 closed (ambiguous)", "the field is absent",
                              "fall back, not close"}));
}

TEST(MonitorClient, FieldAbsentInconsistentSettlesTheEarlyValue) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, std::nullopt, AckSet::from_indexes({9})))
      .add(Resolve{.cmd = n(1), .p = 1, .source = PermitSource::kAckSet})
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(Resolve{.cmd = n(1), .p = 1, .source = PermitSource::kAckSet})
      .add(Corrupt{.cmd = n(1), .stage = FailureStage::kInconsistent})
      .add(settle(1, 1));
  EXPECT_TRUE(Clean(check(client(), t)));
}

TEST(MonitorClient, C7_PayloadFailureSettlingLessThanPIsReported) {
  struct Case {
    FailureStage stage;
    bool metadata;
  };
  for (const Case c : {Case{FailureStage::kChecksum, false}, Case{FailureStage::kMetadata, false},
                       Case{FailureStage::kDecompress, true}, Case{FailureStage::kBatch, true}}) {
    SCOPED_TRACE(failure_stage_name(c.stage));
    const std::string stage = "failed at " + std::string(failure_stage_name(c.stage));
    Trace bad;
    bad.subscribed(1, 1000).add(recv(1, 100));
    if (c.metadata) bad.add(Metadata{.cmd = n(1), .batch_size = 100});
    bad.add(Corrupt{.cmd = n(1), .stage = c.stage}).add(settle(1, 1));
    EXPECT_TRUE(FirstViolation(check(client(1000, 500), bad), RuleId::kC7,
                               {"returned 1 permit when it finished (its terminal transition) "
                                "where the rule returns 100", stage, "99 permits lost"}));
    Trace good;
    good.subscribed(1, 1000).add(recv(1, 100));
    if (c.metadata) good.add(Metadata{.cmd = n(1), .batch_size = 100});
    good.add(Corrupt{.cmd = n(1), .stage = c.stage}).add(settle(1, 100));
    EXPECT_TRUE(Clean(check(client(1000, 500), good)));
  }
}

TEST(MonitorClient, ExplicitValueSettlesWhenMetadataIsUnreadable) {
  // Decision 3: the explicit 10 is returned although B never became known.
  Trace t;
  t.subscribed(1, 16)
      .add(recv(1, 10))
      .add(Corrupt{.cmd = n(1), .stage = FailureStage::kMetadata})
      .add(settle(1, 10))
      .add(quiescent());
  const MonitorReport r = check(client(16, 8), t);
  EXPECT_TRUE(Clean(r));
  EXPECT_THAT(r.deviations, IsEmpty()) << dump(r);
}

// ======================================================================================
// Client accounting: K1-K8 (the command budget).
// ======================================================================================

TEST(MonitorClient, K1_CommandReceivedTwiceIsReported) {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 1)).add(recv(1, 1));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kK1, {"command 1 received twice"}));
}

TEST(MonitorClient, CommandOwnsAllPUntilItsTerminalTransition) {
  Trace t;
  t.subscribed(1, 16).add(recv(1, 5)).add(settle(1, 5));
  EXPECT_TRUE(Clean(check(client(16, 8), t)));
}

TEST(MonitorClient, K2_ClaimsAndRestoresMustMatch) {
  Trace twice;
  twice.subscribed(1, 4).add(recv(1, 2)).add(claim(1, "m0")).add(claim(1, "m0"));
  EXPECT_TRUE(FirstViolation(check(client(), twice), RuleId::kK2, {"message m0 claimed twice"}));
  Trace no_claim;
  no_claim.subscribed(1, 4).add(recv(1, 2)).add(Restore{.cmd = n(1), .msg = s("m0")});
  EXPECT_TRUE(FirstViolation(check(client(), no_claim), RuleId::kK2,
                             {"message m0 restored to command 1 without an open claim"}));
  Trace other_cmd;
  other_cmd.subscribed(1, 4)
      .add(recv(1, 1))
      .add(recv(2, 1))
      .add(claim(1, "m0"))
      .add(Restore{.cmd = n(2), .msg = s("m0")});
  EXPECT_TRUE(FirstViolation(check(client(), other_cmd), RuleId::kK2,
                             {"restored to command 2"}));
}

TEST(MonitorClient, FailedHandOffRestoresItsUnit) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 2))
      .add(claim(1, "m0", 0))
      .add(Restore{.cmd = n(1), .msg = s("m0")})
      .add(claim(1, "m1", 1))
      .add(settle(1, 1))
      .add(msg_return("m1"))
      .add(quiescent());
  EXPECT_TRUE(Clean(check(client(4, 2), t)));
  // Settling only what is left after the unrestored count would lose the restored unit.
  Trace lost;
  lost.subscribed(1, 4)
      .add(recv(1, 2))
      .add(claim(1, "m0", 0))
      .add(Restore{.cmd = n(1), .msg = s("m0")})
      .add(claim(1, "m1", 1))
      .add(settle(1, 0));
  EXPECT_TRUE(FirstViolation(check(client(), lost), RuleId::kK5,
                             {"returned 0 permits when it finished (its terminal transition) "
                              "where the rule returns 1", "1 handed to messages"}));
}

TEST(MonitorClient, K5_RestoreAfterTheTerminalTransitionIsReported) {
  // The unit restored after the settle can never be returned: it is lost.
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 1))
      .add(claim(1, "m0", 0))
      .add(settle(1, 0))
      .add(Restore{.cmd = n(1), .msg = s("m0")});
  const MonitorReport r = check(client(), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kK5, {"m0"}));
}

TEST(MonitorClient, K3_HandingOffAClearedIndexIsReported) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 3, AckSet({37})))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(claim(1, "m1", 1));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kK3,
                             {"command 1 hands off index 1", "its ack_set clears"}));
}

TEST(MonitorClient, K2_HandingOffAnIndexOutsideTheBatchIsReported) {
  for (const std::int64_t b : {std::int64_t{1}, std::int64_t{8}, std::int64_t{64}}) {
    Trace t;
    t.subscribed(1, 128)
        .add(recv(1, std::nullopt))
        .add(Metadata{.cmd = n(1), .batch_size = b})
        .add(claim(1, "last", b - 1))  // the last index of the batch: fine
        .add(claim(1, "beyond", b));
    const MonitorReport r = check(client(128, 64), t);
    EXPECT_TRUE(FirstViolation(r, RuleId::kK2, {"command 1 hands off index " + std::to_string(b),
                                                "outside its batch of B = " + std::to_string(b)}))
        << "B = " << b;
    EXPECT_EQ(r.violations.front().line, 8u) << "B = " << b;  // the second claim, not the first
  }
}

TEST(MonitorClient, ClearedIndexesNeverTouchTheBudget) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 3, AckSet({37})))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(claim(1, "m0", 0))
      .add(claim(1, "m2", 2))
      .add(claim(1, "m5", 5))
      .add(settle(1, 0))
      .add(msg_return("m0"))
      .add(msg_return("m2"))
      .add(flow(2, 1))
      .add(msg_return("m5"))
      .add(quiescent());
  EXPECT_TRUE(Clean(check(client(4, 2), t)));
}

TEST(MonitorClient, K4_SkipThatSettlesNothingLosesItsUnit) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 1))
      .add(Metadata{.cmd = n(1), .batch_size = 1})
      .add(Skip{.cmd = n(1), .index = 0, .reason = SkipReason::kBeforeStart})
      .add(settle(1, 0));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kK4,
                             {"returned 0 permits when it finished (its terminal transition) "
                              "where the rule returns 1", "1 skipped", "1 permit lost"}));
}

TEST(MonitorClient, SkippedUnitStaysCommandOwned) {
  for (SkipReason reason : {SkipReason::kDuplicate, SkipReason::kCompacted,
                            SkipReason::kBeforeStart, SkipReason::kDeadLetter}) {
    SCOPED_TRACE(skip_reason_name(reason));
    Trace t;
    t.subscribed(1, 4)
        .add(recv(1, 1))
        .add(Metadata{.cmd = n(1), .batch_size = 1})
        .add(Skip{.cmd = n(1), .index = 0, .reason = reason})
        .add(settle(1, 1))
        .add(quiescent());
    EXPECT_TRUE(Clean(check(client(), t)));
  }
}

TEST(MonitorClient, K5_SecondTerminalTransitionReturningUnitsIsReported) {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 1)).add(settle(1, 1)).add(settle(1, 1));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kK5,
                             {"command 1 finished a second time (second terminal transition) "
                              "and returned 1 permit",
                              "only the first returns any"}));
  Trace zero;  // a later terminal transition returning 0 is fine
  zero.subscribed(1, 4).add(recv(1, 1)).add(settle(1, 1)).add(settle(1, 0));
  EXPECT_TRUE(Clean(check(client(), zero)));
}

TEST(MonitorClient, K5_HandOffAfterTheTerminalTransitionIsReported) {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 2)).add(settle(1, 2)).add(claim(1, "m1"));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kK5,
                             {"command 1 hands off message m1 after its terminal transition"}));
}

TEST(MonitorClient, K5_NoTerminalTransitionByQuiescenceIsReported) {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 3)).add(quiescent());
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kK5,
                             {"command 1 never finished (no terminal transition) by quiescence",
                              "3 of its permits were neither handed to a message nor returned"}));
}

TEST(MonitorClient, K5_SettlingLessThanOwnedWithoutFailureIsReported) {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 3)).add(claim(1, "m0")).add(settle(1, 1));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kK5,
                             {"returned 1 permit when it finished (its terminal transition) where "
                              "the rule returns 2", "1 permit lost"}));
}

TEST(MonitorClient, K6_DirectReturnBeyondBudgetIsDoubleReturn) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 1))
      .add(claim(1, "m0", 0))
      .add(DirectReturn{.cmd = n(1), .n = 1, .path = "duplicate"});
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kK6,
                             {"command 1 returns 1 permit directly (duplicate)",
                              "only 0 of its permits were left to return", "returned twice"}));
  Trace negative;
  negative.subscribed(1, 4).add(recv(1, 1)).add(DirectReturn{.cmd = n(1), .n = -1});
  EXPECT_TRUE(FirstViolation(check(client(), negative), RuleId::kK6,
                             {"command 1 returns -1 permits directly (a negative count)"}));
  Trace after_settle;
  after_settle.subscribed(1, 4)
      .add(recv(1, 1))
      .add(settle(1, 1))
      .add(DirectReturn{.cmd = n(1), .n = 1, .path = "dead_letter"});
  EXPECT_TRUE(FirstViolation(check(client(), after_settle), RuleId::kK6,
                             {"(dead_letter) but only 0 of its permits were left to return"}));
}

TEST(MonitorClient, K6_DirectReturnTakenFromTheBudgetIsFine) {
  // The legacy early return of a duplicate non-batched message, rewritten under K6: the unit
  // leaves the budget, so the terminal transition returns nothing more.
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 1))
      .add(Skip{.cmd = n(1), .index = 0, .reason = SkipReason::kDuplicate})
      .add(DirectReturn{.cmd = n(1), .n = 1, .path = "duplicate"})
      .add(settle(1, 0))
      .add(quiescent());
  EXPECT_TRUE(Clean(check(client(), t)));
}

TEST(MonitorClient, K7_DirectReturnBesideTheBudgetReturnsTwice) {
  // Revision B's F1: the legacy direct return stays and the budget drains as well.
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 1))
      .add(Skip{.cmd = n(1), .index = 0, .reason = SkipReason::kDuplicate})
      .add(DirectReturn{.cmd = n(1), .n = 1, .path = "duplicate"})
      .add(settle(1, 1));
  const MonitorReport r = check(client(), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kK7, {"returned 1 permit when it finished (its terminal "
                                              "transition) where the rule returns 0", "returns 2 "
                                                                                      "> P"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE2, {"returned 2 permits but its P is 1"}));
}

TEST(MonitorClient, K7_E2_SettlingMoreThanOwnedOverReturns) {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 3)).add(claim(1, "m0")).add(settle(1, 3));
  const MonitorReport r = check(client(), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kK7,
                             {"command 1 returned 3 permits when it finished (its terminal "
                              "transition) where the rule returns 2",
                              "the command returns 4 > P"}));
  Trace after_return = t;
  after_return.add(msg_return("m0"));
  EXPECT_TRUE(Reports(check(client(), after_return).violations, RuleId::kE2,
                      {"command 1 returned 4 permits but its P is 3", "over-return by 1"}));
}

TEST(MonitorClient, K8_HandingOffMoreThanPIsReported) {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 2)).add(claim(1, "m0")).add(claim(1, "m1")).add(claim(1, "m2"));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kK8,
                             {"command 1 hands off message 3 but its P is 2"}));
  Trace good;
  good.subscribed(1, 4)
      .add(recv(1, 2))
      .add(claim(1, "m0"))
      .add(claim(1, "m1"))
      .add(settle(1, 0))
      .add(msg_return("m0"))
      .add(msg_return("m1"));
  EXPECT_TRUE(Clean(check(client(), good)));
}

// K5 and K7 as one property: the terminal transition must return exactly what is still
// command-owned; less loses permits (K5), more over-returns (K7, then E2).
RC_GTEST_PROP(MonitorClient, K5_K7_E1_E2_OnlyTheOwnedRemainderSettlesCleanly, ()) {
  const std::int64_t p = *rc::gen::inRange<std::int64_t>(1, 50);
  const std::int64_t claims = *rc::gen::inRange<std::int64_t>(0, p + 1);
  const std::int64_t settled = *rc::gen::inRange<std::int64_t>(0, 2 * p + 1);
  Trace t;
  t.subscribed(1, 1000).add(recv(1, static_cast<std::uint64_t>(p)));
  for (std::int64_t i = 0; i < claims; ++i) t.add(claim(1, "m" + std::to_string(i), i));
  t.add(settle(1, settled));
  for (std::int64_t i = 0; i < claims; ++i) t.add(msg_return("m" + std::to_string(i)));
  const MonitorReport r = check(client(1000, 500), t);
  const std::int64_t owned = p - claims;
  if (settled == owned) {
    RC_ASSERT(r.violations.empty());
  } else {
    RC_ASSERT(!r.violations.empty());
    RC_ASSERT(r.violations.front().rule == (settled < owned ? RuleId::kK5 : RuleId::kK7));
    const RuleId invariant = settled < owned ? RuleId::kE1 : RuleId::kE2;
    RC_ASSERT(std::any_of(r.violations.begin(), r.violations.end(),
                          [&](const Finding& f) { return f.rule == invariant; }));
  }
}

// ======================================================================================
// Client accounting: S1-S7 (specialised paths).
// ======================================================================================

TEST(MonitorClient, S1_ClaimAfterTransferIsReported) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 1))
      .add(Transfer{.cmd = n(1), .path = TransferPath::kProcessor})
      .add(claim(1, "m0"));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kS1,
                             {"command 1 hands off message m0 from the generic budget",
                              "moved to the processor path"}));
}

TEST(MonitorClient, TransferredCommandSettlesNothing) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 1))
      .add(Transfer{.cmd = n(1), .path = TransferPath::kProcessor})
      .add(DirectReturn{.cmd = n(1), .n = 1, .path = "processor"})
      .add(settle(1, 0))
      .add(quiescent());
  const MonitorReport r = check(client(), t);
  EXPECT_TRUE(Clean(r));
  EXPECT_THAT(r.deviations, IsEmpty()) << dump(r);
}

TEST(MonitorClient, K5_SettleAfterTransferReturnsNothing) {
  // After the transfer the generic budget owns nothing: its terminal transition returns 0.
  Trace t;
  t.subscribed(1, 16)
      .add(recv(1, 8))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(Transfer{.cmd = n(1), .path = TransferPath::kCrypto})
      .add(settle(1, 8));
  EXPECT_TRUE(FirstViolation(check(client(16, 8), t), RuleId::kK5,
                             {"command 1 returned 8 permits when it finished (its terminal "
                              "transition) where the rule returns 0"}));
  // F1: crypto DISCARD of a complete batch returned by the path and again by the budget.
  Trace twice;
  twice.subscribed(1, 16)
      .add(recv(1, 8))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(Transfer{.cmd = n(1), .path = TransferPath::kCrypto})
      .add(DirectReturn{.cmd = n(1), .n = 8, .path = "crypto"})
      .add(settle(1, 8));
  EXPECT_TRUE(FirstViolation(check(client(16, 8), twice), RuleId::kK7, {"returns 16 > P"}));
}

TEST(MonitorClient, S2_NonFinalChunkReturningTwoIsReported) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 1))
      .add(Metadata{.cmd = n(1), .batch_size = 1})
      .add(Transfer{.cmd = n(1), .path = TransferPath::kChunk})
      .add(DirectReturn{.cmd = n(1), .n = 2, .path = "chunk"});
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kS2,
                             {"command 1 non-final chunk returned 2",
                              "each non-final chunk returns 1"}));
}

TEST(MonitorClient, NonFinalChunkReturnsOne) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 1))
      .add(Metadata{.cmd = n(1), .batch_size = 1})
      .add(Transfer{.cmd = n(1), .path = TransferPath::kChunk})
      .add(DirectReturn{.cmd = n(1), .n = 1, .path = "chunk"})
      .add(settle(1, 0))
      .add(quiescent());
  const MonitorReport r = check(client(), t);
  EXPECT_TRUE(Clean(r));
  EXPECT_THAT(r.deviations, IsEmpty()) << dump(r);
}

// A chunk's direct return moves the command to the chunk path (S1) even without a transfer
// event before it: a hand-off from the generic budget after it is reported.
TEST(MonitorClient, S1_HandOffAfterAChunkReturnIsReported) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 1))
      .add(Metadata{.cmd = n(1), .batch_size = 1})
      .add(DirectReturn{.cmd = n(1), .n = 1, .path = "chunk"})
      .add(claim(1, "m0"));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kS1,
                             {"command 1 hands off message m0", "moved to the chunk path"}));
}

TEST(MonitorClient, S3_CryptoDiscardReturningOtherThanBIsReported) {
  Trace t;
  t.subscribed(1, 16)
      .add(recv(1, 8))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(Transfer{.cmd = n(1), .path = TransferPath::kCrypto})
      .add(DirectReturn{.cmd = n(1), .n = 3, .path = "crypto"});
  EXPECT_TRUE(FirstViolation(check(client(16, 8), t), RuleId::kS3,
                             {"command 1 crypto DISCARD returned 3", "it returns B = 8"}));
}

TEST(MonitorClient, CryptoDiscardOfACompleteBatchReturnsB) {
  Trace t;
  t.subscribed(1, 16)
      .add(recv(1, 8))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(Transfer{.cmd = n(1), .path = TransferPath::kCrypto})
      .add(DirectReturn{.cmd = n(1), .n = 8, .path = "crypto"})
      .add(settle(1, 0))
      .add(flow(8, 1))
      .add(quiescent());
  const MonitorReport r = check(client(16, 8), t);
  EXPECT_TRUE(Clean(r));
  EXPECT_THAT(r.deviations, IsEmpty()) << dump(r);
}

// ---- Branches pinned by `ci/mutate --mode monitor` ----

// Zero units returned directly is no negative return (K6 reports only n < 0).
TEST(MonitorCommand, K6_DirectReturnOfZeroUnitsIsNotNegative) {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 1)).add(DirectReturn{.cmd = n(1), .n = 0}).add(settle(1, 1));
  const MonitorReport r = check(client(4, 2), t);
  EXPECT_THAT(r.violations, Not(Contains(HasRule(RuleId::kK6)))) << dump(r);
  Trace negative;
  negative.subscribed(1, 4).add(recv(1, 1)).add(DirectReturn{.cmd = n(1), .n = -1});
  EXPECT_TRUE(Reports(check(client(4, 2), negative).violations, RuleId::kK6, {"returns -1 permits "
                                                                              "directly (a "
                                                                              "negative count)"}));
}

// A finished command named again comes back into the table of commands in flight, which may
// grow and move them all: the command looked up just before must still be found where it now
// is. Tried at every table size up to 80 commands in flight, so some revival grows the table.
TEST(MonitorCommand, ACommandLookedUpBeforeARevivalIsFoundWhereTheTableMovedIt) {
  for (std::uint64_t live = 2; live <= 80; ++live) {
    SCOPED_TRACE(testing::Message() << live << " commands in flight");
    Trace t;
    t.subscribed(1, 1000)
        .add(recv(1000, 1))
        .add(Metadata{.cmd = n(1000), .batch_size = 1})
        .add(claim(1000, "m0"))
        .add(settle(1000, 0))
        .add(msg_return("m0"));  // command 1000 finished
    for (std::uint64_t i = 1; i <= live; ++i) {
      t.add(recv(i, 1)).add(Metadata{.cmd = n(i), .batch_size = 1});
    }
    t.add(claim(live, "mL"))
        .add(msg_return("m0"))  // a second return: names finished command 1000 again
        .add(settle(live, 0))
        .add(claim(1, "m1"))
        .add(msg_return("mL"));
    Monitor m(client(1000, 500));
    for (std::size_t i = 0; i < t.events().size(); ++i) m.on_event(t.events()[i], i + 2);
    const std::optional<CommandLedger> l = m.ledger(n(live));
    ASSERT_TRUE(l.has_value());
    EXPECT_TRUE(l->settled);
    EXPECT_EQ(l->returned, 1);
    if (testing::Test::HasFailure()) break;
  }
}

TEST(MonitorMemory, FinishedClientCommandLeavesTheCommandsInFlight) {
  Monitor m(client(4, 2));
  Trace t;
  t.subscribed(1, 4).add(recv(1, 1));
  std::uint64_t line = 2;
  for (const Event& e : t.events()) m.on_event(e, line++);
  EXPECT_EQ(m.size().commands, 1u);
  m.on_event(settle(1, 1), line++);
  EXPECT_EQ(m.size().commands, 0u);
  EXPECT_EQ(m.size().finished_commands, 1u);
}

}  // namespace
}  // namespace permitcheck::spec
