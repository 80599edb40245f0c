// The Monitor on permit states and returns (spec/monitor_client.cc): S4-S7, M1-M3, N1-N7,
// E1-E6 on client traces, each broken and done right.
#include "spec/monitor.h"

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

TEST(MonitorClient, X3_CryptoFailHoldingPToTheEndOfTheTraceIsADeviation) {
  const MonitorReport r = check(client(16, 8), crypto_fail());
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r);
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX3,
                      {"command 1 (crypto FAIL) holds P = 8 until its incarnation ends"}));
}

TEST(MonitorClient, X3_CryptoFailHeldUntilIncCloseIsADeviation) {
  Trace t = crypto_fail();
  t.add(CloseConsumer{.cnx = s("c1"), .consumer = 0})
      .add(IncClose{.inc = n(1), .reason = CloseReason::kCloseConsumer});
  const MonitorReport r = check(client(16, 8), t);
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r);
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX3,
                      {"command 1 (crypto FAIL) holds P = 8 until its incarnation ends"}));
}

TEST(MonitorClient, X3_CryptoFailHeldWithoutRetainedLedgerIsADeviation) {
  Monitor m(client(16, 8), MonitorOptions{.retain_ledger = false});
  const Trace t = crypto_fail();
  for (std::size_t i = 0; i < t.events().size(); ++i) m.on_event(t.events()[i], i + 2);
  m.finish();
  EXPECT_THAT(m.violations(), IsEmpty()) << dump(m.violations());
  EXPECT_TRUE(Reports(m.deviations(), RuleId::kX3, {"holds P = 8"}));
}

TEST(MonitorClient, X3_CryptoFailHeldAtQuiescenceIsADeviationNotAViolation) {
  Trace t = crypto_fail();
  t.add(quiescent());
  const MonitorReport r = check(client(16, 8), t);
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX3, {"8"}));
}

TEST(MonitorClient, S5_S6_K4_DeadLetterAndDuplicateSkipsStayCommandOwned) {
  // A batch of 4: index 1 past the dead-letter threshold (S5), index 2 a duplicate (S6).
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 4))
      .add(Metadata{.cmd = n(1), .batch_size = 4})
      .add(claim(1, "m0", 0))
      .add(Skip{.cmd = n(1), .index = 1, .reason = SkipReason::kDeadLetter})
      .add(Skip{.cmd = n(1), .index = 2, .reason = SkipReason::kDuplicate})
      .add(claim(1, "m3", 3))
      .add(settle(1, 2))
      .add(msg_return("m0"))
      .add(msg_return("m3"))
      .add(flow(4, 1))
      .add(quiescent());
  EXPECT_TRUE(Clean(check(client(4, 2), t)));
  // Letting the skipped units go with the message objects loses them.
  Trace lost;
  lost.subscribed(1, 4)
      .add(recv(1, 4))
      .add(Metadata{.cmd = n(1), .batch_size = 4})
      .add(claim(1, "m0", 0))
      .add(Skip{.cmd = n(1), .index = 1, .reason = SkipReason::kDeadLetter})
      .add(Skip{.cmd = n(1), .index = 2, .reason = SkipReason::kDuplicate})
      .add(claim(1, "m3", 3))
      .add(settle(1, 0));
  EXPECT_TRUE(FirstViolation(check(client(), lost), RuleId::kK4,
                             {"returned 0 permits when it finished (its terminal transition) "
                              "where the rule returns 2", "2 skipped", "2 permits lost"}));
}

// The skip-release marker speaks of the skip just before it: right after a dead-letter skip
// it is S5; after any other event in between it is no longer that skip's.
TEST(MonitorClient, S5_ASkipReleaseIsJudgedOnlyRightAfterItsSkip) {
  // A batch of 4, index 1 skipped as dead-letter, then `after`.
  auto after_skip = [](std::initializer_list<Event> after) {
    Trace t;
    t.subscribed(1, 4)
        .add(recv(1, 4))
        .add(Metadata{.cmd = n(1), .batch_size = 4})
        .add(claim(1, "m0", 0))
        .add(Skip{.cmd = n(1), .index = 1, .reason = SkipReason::kDeadLetter});
    for (const Event& e : after) t.add(e);
    return t;
  };
  const Extension release{std::string(kSkipReleaseEvent)};
  EXPECT_TRUE(FirstViolation(check(client(4, 2), after_skip({release})), RuleId::kS5,
                             {"dead-letter message at index 1 of command 1"}));
  const MonitorReport later = check(client(4, 2), after_skip({claim(1, "m2", 2), release}));
  EXPECT_THAT(later.violations, Not(Contains(HasRule(RuleId::kS5)))) << dump(later);
  // Another extension event right after the skip says nothing of it.
  const MonitorReport unrelated =
      check(client(4, 2), after_skip({Extension{"x-unimplemented-SEEK"}}));
  EXPECT_THAT(unrelated.violations, Not(Contains(HasRule(RuleId::kS5)))) << dump(unrelated);
}

TEST(MonitorClient, K7_DeadLetterNonBatchedReturnedDirectlyAndSettledIsDouble) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 1))
      .add(Metadata{.cmd = n(1), .batch_size = 1})
      .add(Skip{.cmd = n(1), .index = 0, .reason = SkipReason::kDeadLetter})
      .add(DirectReturn{.cmd = n(1), .n = 1, .path = "dead_letter"})
      .add(settle(1, 1));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kK7, {"returns 2 > P"}));
}

// A zero-queue consumer (Q = 0) that received a batch of 8.
Trace zero_queue_batch() {
  Trace t;
  t.subscribed(1, 0).add(recv(1, 8)).add(Metadata{.cmd = n(1), .batch_size = 8});
  return t;
}

TEST(MonitorClient, S7_ZeroQueueHandingOffABatchIsReported) {
  Trace t = zero_queue_batch();
  t.add(claim(1, "m0", 0));
  EXPECT_TRUE(FirstViolation(check(client(0, std::nullopt), t), RuleId::kS7,
                             {"zero-queue consumer hands off message m0 of batch command 1"}));
}

TEST(MonitorClient, S7_ZeroQueueClosingTheConnectionIsReported) {
  Trace t = zero_queue_batch();
  t.add(ProtocolError{.cnx = s("c1"), .reason = "batch on zero queue"});
  EXPECT_TRUE(FirstViolation(check(client(0, std::nullopt), t), RuleId::kS7,
                             {"connection c1 closed (batch on zero queue)",
                              "closes the consumer only"}));
}

TEST(MonitorClient, ZeroQueueClosingTheConsumerIsFine) {
  Trace t = zero_queue_batch();
  t.add(IncClose{.inc = n(1), .reason = CloseReason::kClosed}).add(Drop{.cmd = n(1), .n = 8});
  EXPECT_TRUE(Clean(check(client(0, std::nullopt), t)));
  // A non-batched message is fine on a zero-queue consumer.
  Trace single;
  single.subscribed(1, 0)
      .add(recv(1, 1))
      .add(Metadata{.cmd = n(1), .batch_size = 1})
      .add(claim(1, "m0", 0))
      .add(settle(1, 0))
      .add(msg_return("m0"));
  EXPECT_TRUE(Clean(check(client(0, std::nullopt), single)));
}

// ======================================================================================
// Client accounting: M1-M3, N1-N7 (message lifecycle and incarnations).
// ======================================================================================

// One message m0 of command 1 (P = 1) handed off on incarnation 1, command settled.
Trace handed_off(std::int64_t q = 4) {
  Trace t;
  t.subscribed(1, q).add(recv(1, 1)).add(claim(1, "m0", 0)).add(settle(1, 0));
  return t;
}

TEST(MonitorClient, M1_ReturnOfAMessageNeverHandedOffIsReported) {
  Trace t = handed_off();
  t.add(msg_return("m9"));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kM1,
                             {"message m9 returned but never handed off"}));
}

TEST(MonitorClient, M1_ReturnOfTwoUnitsIsReported) {
  Trace t = handed_off();
  t.add(msg_return("m0", 2));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kM1,
                             {"message m0 of command 1 returned 2",
                              "a message returns exactly 1"}));
}

TEST(MonitorClient, M1_DropWhileTheIncarnationIsCurrentIsReported) {
  Trace t = handed_off();
  t.add(Drop{.msg = s("m0"), .n = 1});
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kM1,
                             {"message m0 dropped 1 permit while incarnation 1 is current",
                              "lost"}));
  Trace cmd;
  cmd.subscribed(1, 4).add(recv(1, 3)).add(Drop{.cmd = n(1), .n = 3});
  EXPECT_TRUE(FirstViolation(check(client(), cmd), RuleId::kM1,
                             {"command 1 dropped 3 permits while incarnation 1 is current"}));
  Trace twice = handed_off();
  twice.add(IncClose{.inc = n(1), .reason = CloseReason::kClosed})
      .add(Drop{.msg = s("m0"), .n = 1})
      .add(Drop{.msg = s("m0"), .n = 1});
  EXPECT_TRUE(FirstViolation(check(client(), twice), RuleId::kM1,
                             {"message m0 dropped but not outstanding"}));
}

TEST(MonitorClient, M1_MessageNeverReturnedByQuiescenceIsReported) {
  Trace t = handed_off();
  t.add(quiescent());
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kM1,
                             {"1 message of command 1 never returned its permit"}));
}

TEST(MonitorClient, ReturnedOnceWhileCurrentIsFine) {
  Trace t = handed_off();
  t.add(msg_return("m0")).add(quiescent());
  EXPECT_TRUE(Clean(check(client(), t)));
}

TEST(MonitorClient, StaleEpochDiscardReturnsThroughTheRetainedState) {
  // An epoch bump on the same incarnation: the discarded message returns to its own, still
  // current, permit state (the conservation at quiescence holds).
  Trace current = handed_off();
  current.add(msg_return("m0")).add(quiescent());
  EXPECT_TRUE(Clean(check(client(), current)));
  // After a reconnect the retained state has ended: the return is dropped, not credited.
  Trace replaced = handed_off();
  replaced.add(Disconnect{.cnx = s("c1")})
      .add(IncClose{.inc = n(1), .reason = CloseReason::kDisconnect})
      .add(Connect{.cnx = s("c2")})
      .subscribed(2, 4, "c2")
      .add(Drop{.msg = s("m0"), .n = 1})
      .add(quiescent("c2"));
  EXPECT_TRUE(Clean(check(client(), replaced)));
}

TEST(MonitorClient, M3_SecondReturnOfAMessageIsReported) {
  Trace t = handed_off();
  t.add(msg_return("m0")).add(msg_return("m0"));
  const MonitorReport r = check(client(), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kM3,
                             {"message m0 returned 1 again", "a second return is a no-op"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE2, {"returned 2 permits but its P is 1"}));
}

TEST(MonitorClient, SecondReturnOfZeroIsANoOp) {
  Trace t = handed_off();
  t.add(msg_return("m0")).add(msg_return("m0", 0)).add(quiescent());
  EXPECT_TRUE(Clean(check(client(), t)));
}

TEST(MonitorClient, N1_PermitStateOpenedTwiceIsReported) {
  Trace t;
  t.subscribed(1, 4).add(IncOpen{.inc = n(1), .cnx = s("c1"), .consumer = 0});
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kN1, {"permit state 1 opened twice"}));
}

TEST(MonitorClient, N1_EventsForAStateNeverOpenedAreReported) {
  Trace r;
  r.subscribed(1, 4).add(recv(1, 1, {}, 9));
  EXPECT_TRUE(FirstViolation(check(client(), r), RuleId::kN1,
                             {"command 1 received for permit state 9, which was never opened"}));
  Trace enabled;
  enabled.add(IncFlowEnabled{.inc = n(9)});
  EXPECT_TRUE(FirstViolation(check(client(), enabled), RuleId::kN1,
                             {"permit state 9 enabled but never opened"}));
  Trace closed;
  closed.add(IncClose{.inc = n(9), .reason = CloseReason::kClosed});
  EXPECT_TRUE(FirstViolation(check(client(), closed), RuleId::kN1,
                             {"permit state 9 closed but never opened"}));
  Trace flowed;
  flowed.add(flow(4, 9));
  EXPECT_TRUE(FirstViolation(check(client(), flowed), RuleId::kN1,
                             {"Flow for permit state 9, which was never opened"}));
}

TEST(MonitorClient, OneStatePerIncarnationIsFine) {
  Trace t = handed_off();
  t.add(msg_return("m0"))
      .add(CloseConsumer{.cnx = s("c1"), .consumer = 0})
      .add(IncClose{.inc = n(1), .reason = CloseReason::kCloseConsumer})
      .subscribed(2, 4)
      .add(recv(2, 1, {}, 2))
      .add(settle(2, 1))
      .add(quiescent());
  EXPECT_TRUE(Clean(check(client(), t)));
}

// Incarnation 1 holds 1 unreturned permit in its accumulator (below T = 2).
Trace accumulator_holds_one() {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 1)).add(settle(1, 1));
  return t;
}

TEST(MonitorClient, N2_InitialGrantIncludingTheOldAccumulatorIsReported) {
  Trace t = accumulator_holds_one();
  t.add(IncOpen{.inc = n(2), .cnx = s("c1"), .consumer = 0})
      .add(IncFlowEnabled{.inc = n(2)})
      .add(flow(5, 2));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kN2,
                             {"initial Flow of incarnation 2 is 5",
                              "the initial grant must be Q = 4"}));
}

TEST(MonitorClient, N2_InitialGrantIncludingTheOldAccumulatorAfterIncCloseIsReported) {
  // The usual order: the old state is closed (CommandCloseConsumer), then the replacement opens.
  Trace t = accumulator_holds_one();
  t.add(CloseConsumer{.cnx = s("c1"), .consumer = 0})
      .add(IncClose{.inc = n(1), .reason = CloseReason::kCloseConsumer})
      .add(IncOpen{.inc = n(2), .cnx = s("c1"), .consumer = 0})
      .add(IncFlowEnabled{.inc = n(2)})
      .add(flow(5, 2));
  const MonitorReport r = check(client(), t);
  ASSERT_FALSE(r.violations.empty()) << dump(r);
  EXPECT_TRUE(FirstViolation(r, RuleId::kN2, {"initial Flow of incarnation 2 is 5"}));
}

TEST(MonitorClient, ReplacementStartsWithQAndTheOldCreditIsDropped) {
  Trace t = accumulator_holds_one();
  t.add(CloseConsumer{.cnx = s("c1"), .consumer = 0})
      .add(IncClose{.inc = n(1), .reason = CloseReason::kCloseConsumer})
      .add(Drop{.n = 1})
      .subscribed(2, 4)
      .add(quiescent());
  EXPECT_TRUE(Clean(check(client(), t)));
}

TEST(MonitorClient, N3_ReturnToAnEndedIncarnationWithoutReplacementIsReported) {
  Trace t = handed_off();
  t.add(IncClose{.inc = n(1), .reason = CloseReason::kClosed}).add(msg_return("m0"));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kN3,
                             {"return of message m0 of command 1 credits 1 permit to "
                              "incarnation 1, which has ended (must be dropped)"}));
  Trace drop_unknown;
  drop_unknown.add(Drop{.cmd = n(9), .n = 1});
  EXPECT_TRUE(FirstViolation(check(client(), drop_unknown), RuleId::kN3,
                             {"drop of command 9, which was never received"}));
}

// N2: a permit state opened for the same consumer ends the one before it, even when nothing
// closed that one first; a later return to the old state then crosses into the replacement
// (E3: it must be dropped).
TEST(MonitorClient, E3_ReplacementOpenedWithoutACloseEndsThePreviousState) {
  Trace t = handed_off();
  t.add(IncOpen{.inc = n(2), .cnx = s("c1"), .consumer = 0})
      .add(IncFlowEnabled{.inc = n(2)})
      .add(flow(4, 2))
      .add(msg_return("m0"));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kE3,
                             {"return of message m0 of command 1", "after it ended",
                              "incarnation 2 is current"}));
}

TEST(MonitorClient, DroppingTheReturnOfAnEndedIncarnationIsFine) {
  Trace t = handed_off();
  t.add(IncClose{.inc = n(1), .reason = CloseReason::kClosed}).add(Drop{.msg = s("m0"), .n = 1});
  EXPECT_TRUE(Clean(check(client(), t)));
}

// The drop of a command's last outstanding message finishes the command: it leaves the
// commands in flight.
TEST(MonitorClient, DropOfTheLastMessageOfASettledCommandFinishesIt) {
  Monitor m(client(), MonitorOptions{.retain_ledger = false});
  const Trace t = handed_off();
  std::uint64_t line = 2;
  for (const Event& e : t.events()) m.on_event(e, line++);
  EXPECT_EQ(m.size().commands, 1u);  // settled, its message still out
  m.on_event(IncClose{.inc = n(1), .reason = CloseReason::kClosed}, line++);
  m.on_event(Drop{.msg = s("m0"), .n = 1}, line++);
  EXPECT_EQ(m.size().commands, 0u);
  EXPECT_THAT(m.violations(), IsEmpty()) << dump(m.violations());
}

// Quiescence is declared for a (connection, consumer): the consumer's permit state on another
// connection is not judged by it; on its own connection it is.
TEST(MonitorClient, K5_QuiescenceOnAnotherConnectionDoesNotJudgeTheConsumersPermitState) {
  Trace t;
  t.subscribed(1, 4, "c1").add(recv(1, 1));
  Trace elsewhere = t;
  elsewhere.add(quiescent("c2"));
  const MonitorReport r = check(client(), elsewhere);
  EXPECT_THAT(r.violations, Not(Contains(HasRule(RuleId::kK5)))) << dump(r);
  t.add(quiescent("c1"));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kK5,
                             {"command 1 never finished (no terminal transition) by quiescence"}));
}

// A command still unsettled at quiescence is one K5, however many quiescences follow; a
// settled one whose message never returned is one M1.
TEST(MonitorClient, K5_M1_EachIsReportedOnceOverSeveralQuiescences) {
  Trace unsettled;
  unsettled.subscribed(1, 4).add(recv(1, 1)).add(quiescent()).add(quiescent());
  const MonitorReport k5 = check(client(), unsettled);
  EXPECT_EQ(std::count_if(k5.violations.begin(), k5.violations.end(),
                          [](const Finding& f) { return f.rule == RuleId::kK5; }), 1)
      << dump(k5);
  Trace unreturned = settled_with_message_out();
  unreturned.add(quiescent())
      .add(quiescent());
  const MonitorReport m1 = check(client(), unreturned);
  EXPECT_EQ(std::count_if(m1.violations.begin(), m1.violations.end(),
                          [](const Finding& f) { return f.rule == RuleId::kM1; }), 1)
      << dump(m1);
}

// A command on a transfer path (here crypto, X3) is the path's to finish: not K5 at quiescence.
TEST(MonitorClient, K5_ACommandOnATransferPathIsNotJudgedAtQuiescence) {
  Trace t;
  t.subscribed(1, 16)
      .add(recv(1, 8))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(Transfer{.cmd = n(1), .path = TransferPath::kCrypto})
      .add(quiescent());
  const MonitorReport r = check(client(16, 8), t);
  EXPECT_THAT(r.violations, Not(Contains(HasRule(RuleId::kK5)))) << dump(r);
}

// A ruleset that tracks no budget (legacy) makes no promise K5 or M1 could hold it to.
TEST(MonitorClient, K5_LegacyIsNotJudgedForTerminalTransitionsAtQuiescence) {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 1)).add(quiescent());
  const MonitorReport legacy = check(client(4, 2, RulesetId::kLegacy), t);
  EXPECT_THAT(legacy.violations, Not(Contains(HasRule(RuleId::kK5)))) << dump(legacy);
  EXPECT_THAT(check(client(), t).violations, Contains(HasRule(RuleId::kK5)));
}

// A return of 0 units credits nothing, so it never crosses into a replacement (E3).
TEST(MonitorClient, E3_AReturnOfNothingAfterTheIncarnationEndedCrossesNothing) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 1))
      .add(IncClose{.inc = n(1), .reason = CloseReason::kCloseConsumer})
      .subscribed(2, 4)
      .add(settle(1, 0));
  const MonitorReport r = check(client(), t);
  EXPECT_THAT(r.violations, Not(Contains(HasRule(RuleId::kE3)))) << dump(r);
  EXPECT_THAT(r.violations, Not(Contains(HasRule(RuleId::kN3)))) << dump(r);
}

// A message dropped (its incarnation ended) is finished: returning it afterwards is a second
// return (M3), not a message never handed off (M1).
TEST(MonitorClient, M3_AMessageReturnedAfterItWasDroppedIsASecondReturn) {
  Trace t = settled_with_message_out();
  t.add(IncClose{.inc = n(1), .reason = CloseReason::kClosed})
      .add(Drop{.msg = s("m0"), .n = 1})
      .add(msg_return("m0"));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kM3, {"message m0 returned 1 again"}));
}

// An initial Flow above Q is N2 only when the replacement inherited units from its predecessor;
// with nothing inherited it is an initial grant other than Q (N4).
TEST(MonitorClient, N2_N4_AnInitialFlowAboveQIsN2OnlyWithAnInheritedAccumulator) {
  Trace fresh;
  fresh.add(IncOpen{.inc = n(1), .cnx = s("c1"), .consumer = 0})
      .add(IncFlowEnabled{.inc = n(1)})
      .add(flow(6, 1));
  EXPECT_TRUE(FirstViolation(check(client(), fresh), RuleId::kN4,
                             {"initial Flow of incarnation 1 is 6"}));
  Trace inherited;
  inherited.subscribed(1, 4)
      .add(recv(1, 1))
      .add(settle(1, 1))  // 1 unit in the accumulator (T = 2: no Flow yet)
      .add(IncOpen{.inc = n(2), .cnx = s("c1"), .consumer = 0})
      .add(IncFlowEnabled{.inc = n(2)})
      .add(flow(5, 2));
  EXPECT_TRUE(FirstViolation(check(client(), inherited), RuleId::kN2,
                             {"initial Flow of incarnation 2 is 5"}));
}

// The connection's protocol error is the terminal transition of a command that owed it (C4):
// a settle after it is a second terminal transition (K5).
TEST(MonitorClient, K5_ASettleAfterTheProtocolErrorItsCommandOwedIsASecondTerminalTransition) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, std::uint64_t{0}))
      .add(ProtocolError{.cnx = s("c1"), .reason = "message_permits out of range"})
      .add(settle(1, 1));
  EXPECT_TRUE(Reports(check(client(), t).violations, RuleId::kK5,
                      {"command 1 finished a second time (second terminal transition) and "
                       "returned 1 permit"}));
}

// A command already settled is not what a connection's close is about: an inconsistent one,
// settled while its message is still out, does not make the close a C5.
TEST(MonitorClient, C5_ASettledInconsistentCommandDoesNotMakeTheCloseAboutIt) {
  auto trace = [](bool settled) {
    Trace t;
    t.subscribed(1, 16)
        .add(recv(1, 3))
        .add(Metadata{.cmd = n(1), .batch_size = 8})
        .add(claim(1, "m0", 0));
    if (settled) t.add(settle(1, 2));
    t.add(ProtocolError{.cnx = s("c1"), .reason = "closed"});
    return t;
  };
  const MonitorReport settled = check(client(16, 8), trace(true));
  EXPECT_THAT(settled.violations, Not(Contains(HasRule(RuleId::kC5)))) << dump(settled);
  EXPECT_TRUE(Reports(check(client(16, 8), trace(false)).violations, RuleId::kC5,
                      {"over inconsistent data"}));
}

// C5 (with C7): a payload failure is corrupted data, acknowledged and settled; the client
// closes nothing. Pulsar's CorruptedBatchMessagePermitTest expects the same broker consumer to
// keep receiving and counting after the corrupted batch.
TEST(MonitorClient, C5_ClosingTheConnectionInsteadOfSettlingAPayloadFailureIsReported) {
  for (FailureStage stage : {FailureStage::kChecksum, FailureStage::kMetadata,
                             FailureStage::kDecompress, FailureStage::kBatch}) {
    Trace t;
    t.subscribed(1, 16).add(recv(1, 10));
    if (stage != FailureStage::kChecksum && stage != FailureStage::kMetadata) {
      t.add(Metadata{.cmd = n(1), .batch_size = 10});
    }
    t.add(Corrupt{.cmd = n(1), .stage = stage});
    Trace closed = t;
    closed.add(ProtocolError{.cnx = s("c1"), .reason = "corrupt payload"});
    EXPECT_TRUE(FirstViolation(check(client(16, 8), closed), RuleId::kC5,
                               {"connection c1 closed (corrupt payload) while command 1 had a "
                                "payload failure (",
                                failure_stage_name(stage),
                                ") to settle", "settles P = 10"}));
    // Revision C closed the connection over any malformed command (F4): not a C5 there.
    EXPECT_THAT(check(client(16, 8, RulesetId::kRevC), closed).violations,
                Not(Contains(HasRule(RuleId::kC5))));
    Trace settled = t;
    settled.add(settle(1, 10)).add(flow(10, 1)).add(quiescent());
    EXPECT_TRUE(Clean(check(client(16, 8), settled))) << failure_stage_name(stage);
  }
}

TEST(MonitorClient, C6_ClosingTheConnectionOverAPayloadFailureWithTheFieldAbsentIsReported) {
  Trace t;
  t.subscribed(1, 16)
      .add(recv(1, std::nullopt))
      .add(Corrupt{.cmd = n(1), .stage = FailureStage::kChecksum})
      .add(ProtocolError{.cnx = s("c1"), .reason = "checksum"});
  EXPECT_TRUE(FirstViolation(check(client(16, 8), t), RuleId::kC6,
                             {"while command 1 had a payload failure (checksum) to settle"}));
}

// C5: more deliverable messages than P is corrupted data too: stop handing off, settle, keep
// the connection.
TEST(MonitorClient, C5_ClosingTheConnectionOverMoreDeliverableMessagesThanPIsReported) {
  Trace t;
  t.subscribed(1, 16)
      .add(recv(1, 2))
      .add(Metadata{.cmd = n(1), .batch_size = 2})
      .add(claim(1, "m0", 0))
      .add(claim(1, "m1", 1));
  Trace stopped = t;  // the third message is found: corrupted-data handling
  stopped.add(Corrupt{.cmd = n(1), .stage = FailureStage::kInconsistent, .index = 2});
  Trace closed = stopped;
  closed.add(ProtocolError{.cnx = s("c1"), .reason = "too many messages"});
  EXPECT_TRUE(FirstViolation(check(client(16, 8), closed), RuleId::kC5,
                             {"command 1 had inconsistent data (more deliverable messages than P",
                              "closing neither the consumer nor the connection"}));
  Trace settled = stopped;
  settled.add(settle(1, 0)).add(msg_return("m0")).add(msg_return("m1")).add(quiescent());
  EXPECT_TRUE(Clean(check(client(16, 8), settled)));
  // A client that hands the third one off (K8) and then closes is reported for both.
  Trace handed = t;
  handed.add(claim(1, "m2")).add(ProtocolError{.cnx = s("c1"), .reason = "too many"});
  const MonitorReport r = check(client(16, 8), handed);
  EXPECT_TRUE(FirstViolation(r, RuleId::kK8, {"hands off message 3 but its P is 2"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kC5, {"command 1 had 3 messages handed off for P = 2"}));
}

// A protocol error closes the connection, so the permit states on it have ended: a later
// quiescence does not judge their commands (K5).
TEST(MonitorClient, K5_APermitStateEndedByItsConnectionsProtocolErrorIsNotJudgedAtQuiescence) {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 1));
  Trace closed = t;
  closed.add(ProtocolError{.cnx = s("c1"), .reason = "closed"}).add(quiescent());
  const MonitorReport r = check(client(), closed);
  EXPECT_THAT(r.violations, Not(Contains(HasRule(RuleId::kK5)))) << dump(r);
  t.add(quiescent());
  EXPECT_THAT(check(client(), t).violations, Contains(HasRule(RuleId::kK5)));
}

TEST(MonitorClient, N4_FlowBeforeTheStateIsFlowEnabledIsReported) {
  Trace t;
  t.add(IncOpen{.inc = n(1), .cnx = s("c1"), .consumer = 0}).add(flow(4, 1));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kN4,
                             {"Flow of 4 for incarnation 1 before its Subscribe succeeded"}));
}

TEST(MonitorClient, N4_InitialGrantOtherThanQIsReported) {
  Trace t;
  t.add(IncOpen{.inc = n(1), .cnx = s("c1"), .consumer = 0})
      .add(IncFlowEnabled{.inc = n(1)})
      .add(flow(3, 1));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kN4,
                             {"initial Flow of incarnation 1 is 3",
                              "the initial grant must be Q = 4"}));
}

TEST(MonitorClient, N5_FlowOfAnEndedIncarnationWithNoReplacementIsReported) {
  Trace t = accumulator_holds_one();
  t.add(recv(2, 1)).add(settle(2, 1));  // accumulator reaches T = 2: a Flow is queued
  t.add(IncClose{.inc = n(1), .reason = CloseReason::kClosed}).add(flow(2, 1));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kN5,
                             {"Flow of 2 for incarnation 1 written after it ended"}));
}

TEST(MonitorClient, FlowAtTheThresholdWhileCurrentIsFine) {
  Trace t = accumulator_holds_one();
  t.add(recv(2, 1)).add(settle(2, 1)).add(flow(2, 1)).add(quiescent());
  EXPECT_TRUE(Clean(check(client(), t)));
}

TEST(MonitorClient, N6_OldFlowAfterTheReplacementsSubscribeIsReported) {
  Trace t = accumulator_holds_one();
  t.add(recv(2, 1))
      .add(settle(2, 1))
      .add(CloseConsumer{.cnx = s("c1"), .consumer = 0})
      .add(IncClose{.inc = n(1), .reason = CloseReason::kCloseConsumer})
      .add(IncOpen{.inc = n(2), .cnx = s("c1"), .consumer = 0})
      .add(flow(2, 1));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kN6,
                             {"Flow of 2 for ended incarnation 1",
                              "after the Subscribe of its replacement 2"}));
}

TEST(MonitorClient, OldFlowWrittenBeforeTheReplacementIsFine) {
  Trace t = accumulator_holds_one();
  t.add(recv(2, 1))
      .add(settle(2, 1))
      .add(flow(2, 1))
      .add(CloseConsumer{.cnx = s("c1"), .consumer = 0})
      .add(IncClose{.inc = n(1), .reason = CloseReason::kCloseConsumer})
      .subscribed(2, 4)
      .add(quiescent());
  EXPECT_TRUE(Clean(check(client(), t)));
}

// Legacy: two non-batched messages consumed, their two permits reach T = 2.
Trace legacy_two_consumed() {
  Trace t;
  t.subscribed(1, 4);
  for (std::uint64_t cmd = 1; cmd <= 2; ++cmd) {
    const std::string m = "m" + std::to_string(cmd);
    t.add(recv(cmd, std::nullopt)).add(claim(cmd, m, 0)).add(settle(cmd, 0)).add(msg_return(m));
  }
  return t;
}

TEST(MonitorClient, LegacyWritesTheOldFlowAnyway) {
  Trace t = legacy_two_consumed();
  t.add(IncClose{.inc = n(1), .reason = CloseReason::kCloseConsumer})
      .add(IncOpen{.inc = n(2), .cnx = s("c1"), .consumer = 0})
      .add(flow(2, 1));
  EXPECT_TRUE(Clean(check(client(4, 2, RulesetId::kLegacy), t)));
}

// The accumulator of incarnation 1 holds 2^31-1 (Q = 2^31-1, one command of that P returned).
Trace accumulator_at_max() {
  Trace t;
  t.subscribed(1, kMaxPermits)
      .add(recv(1, static_cast<std::uint64_t>(kMaxPermits)))
      .add(settle(1, kMaxPermits))
      .add(recv(2, 1));
  return t;
}

TEST(MonitorClient, N7_AccumulatorOverflowIsReported) {
  Trace t = accumulator_at_max();
  t.add(settle(2, 1));
  EXPECT_TRUE(FirstViolation(check(client(kMaxPermits, std::nullopt), t), RuleId::kN7,
                             {"accumulator of incarnation 1 holds 2147483647",
                              "adding 1 exceeds 2^31-1"}));
}

TEST(MonitorClient, OverflowClosesTheConnectionInsteadOfCrediting) {
  Trace t = accumulator_at_max();
  t.add(ProtocolError{.cnx = s("c1"), .reason = "accumulator overflow"});
  EXPECT_TRUE(Clean(check(client(kMaxPermits, std::nullopt), t)));
  Trace drained = accumulator_at_max();
  drained.add(flow(kMaxPermits, 1)).add(settle(2, 1));
  EXPECT_TRUE(Clean(check(client(kMaxPermits, std::nullopt), drained)));
}

// ======================================================================================
// End-to-end invariants E1-E6 on client accounting (and model traces).
// ======================================================================================

TEST(MonitorClient, C7_E1_CommandFinishingShortOfPIsReported) {
  Trace t;
  t.subscribed(1, 1000)
      .add(recv(1, 100))
      .add(Corrupt{.cmd = n(1), .stage = FailureStage::kChecksum})
      .add(settle(1, 1));
  const MonitorReport r = check(client(1000, 500), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kC7, {"99 permits lost"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE1,
                      {"command 1 finished having returned 1 of its P = 100",
                       "99 permits lost"}));
}

TEST(MonitorClient, E1_E2_LegacyRulesetDoesNotPromiseTheInvariants) {
  // Legacy settles 1 for a checksum failure of 100 (L1) and 4 for L5's partial batch of 3.
  Trace l1;
  l1.subscribed(1, 1000)
      .add(recv(1, 100))
      .add(Corrupt{.cmd = n(1), .stage = FailureStage::kChecksum})
      .add(settle(1, 1));
  const MonitorReport r1 = check(client(1000, 500, RulesetId::kLegacy), l1);
  EXPECT_THAT(r1.violations, IsEmpty()) << dump(r1);
  Trace l5;
  l5.subscribed(1, 1000)
      .add(recv(1, 3, AckSet({37})))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(claim(1, "m0", 0))
      .add(claim(1, "m2", 2))
      .add(claim(1, "m5", 5))
      .add(Corrupt{.cmd = n(1), .stage = FailureStage::kBatch, .index = 6})
      .add(settle(1, 1))
      .add(msg_return("m0"))
      .add(msg_return("m2"))
      .add(msg_return("m5"));
  const MonitorReport r5 = check(client(1000, 500, RulesetId::kLegacy), l5);
  EXPECT_THAT(r5.violations, Not(Contains(HasRule(RuleId::kE1)))) << dump(r5);
  EXPECT_THAT(r5.violations, Not(Contains(HasRule(RuleId::kE2)))) << dump(r5);
  EXPECT_THAT(r5.violations, IsEmpty()) << dump(r5);
  // The same L5 trace under rev-d over-returns.
  const MonitorReport d5 = check(client(1000, 500), l5);
  EXPECT_TRUE(Reports(d5.violations, RuleId::kE2, {"returned 4 permits but its P is 3"}));
  // Legacy Flow beyond the accumulator (2) is not reported either.
  Trace over = legacy_two_consumed();
  over.add(flow(3, 1));
  const MonitorReport ro = check(client(4, 2, RulesetId::kLegacy), over);
  EXPECT_THAT(ro.violations, IsEmpty()) << dump(ro);
  EXPECT_TRUE(FirstViolation(check(client(4, 2), over), RuleId::kE2, {"over-grant by 1"}));
}

TEST(MonitorClient, E2_FlowBeyondTheAccumulatorIsAnOverGrant) {
  Trace t = accumulator_holds_one();
  t.add(flow(2, 1));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kE2,
                             {"Flow of 2 for incarnation 1 but its accumulator holds 1",
                              "over-grant by 1"}));
}

// The over-grant empties the accumulator: a second Flow of 1 with nothing returned since is
// an over-grant again, by 1.
TEST(MonitorClient, E2_FlowAfterAnOverGrantIsJudgedAgainstAnEmptyAccumulator) {
  Trace t = accumulator_holds_one();
  t.add(flow(2, 1)).add(flow(1, 1));
  const MonitorReport r = check(client(), t);
  EXPECT_THAT(r.violations, Contains(HasRule(RuleId::kE2)).Times(2)) << dump(r);
  EXPECT_TRUE(Reports(r.violations, RuleId::kE2,
                      {"Flow of 1 for incarnation 1 but its accumulator holds 0", "over-grant by 1"}));
}

TEST(MonitorClient, E2_OverReturnOfACommandIsReported) {
  // Metadata narrows P from the early 4 (every ack_set bit) to 3 (bits below B): a return of 4
  // taken earlier is now an over-return.
  Trace t;
  t.subscribed(1, 16)
      .add(recv(1, std::nullopt, AckSet::from_indexes({0, 2, 5, 9})))
      .add(DirectReturn{.cmd = n(1), .n = 4, .path = "duplicate"})
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(settle(1, 0));
  EXPECT_TRUE(FirstViolation(check(client(16, 8), t), RuleId::kE2,
                             {"command 1 returned 4 permits but its P is 3",
                              "over-return by 1"}));
}

TEST(MonitorClient, E3_ReturnCrossingIntoTheReplacementIsReported) {
  Trace t = handed_off();
  t.add(Disconnect{.cnx = s("c1")})
      .add(IncClose{.inc = n(1), .reason = CloseReason::kDisconnect})
      .add(Connect{.cnx = s("c2")})
      .subscribed(2, 4, "c2")
      .add(msg_return("m0"));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kE3,
                             {"return of message m0 of command 1 credits 1 permit debited to "
                              "incarnation 1 after it ended",
                              "incarnation 2 is current"}));
  // Same pooled connection (L7): still another incarnation.
  Trace same = handed_off();
  same.add(CloseConsumer{.cnx = s("c1"), .consumer = 0})
      .add(IncClose{.inc = n(1), .reason = CloseReason::kCloseConsumer})
      .subscribed(2, 4)
      .add(msg_return("m0"));
  EXPECT_TRUE(FirstViolation(check(client(), same), RuleId::kE3, {"incarnation 2 is current"}));
}

TEST(MonitorClient, LegacyCreditsTheCurrentConsumer) {
  Trace t = handed_off();
  t.add(CloseConsumer{.cnx = s("c1"), .consumer = 0})
      .add(IncClose{.inc = n(1), .reason = CloseReason::kCloseConsumer})
      .subscribed(2, 4)
      .add(msg_return("m0"));
  EXPECT_TRUE(Clean(check(client(4, 2, RulesetId::kLegacy), t)));
}

TEST(MonitorClient, QuiescenceConservesQ) {
  // The trace-format example, then quiescence: available 3 + accumulator 1 = Q = 4.
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 3, AckSet({37})))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(Resolve{.cmd = n(1), .p = 3, .source = PermitSource::kExplicit})
      .add(claim(1, "m0", 0))
      .add(claim(1, "m2", 2))
      .add(Corrupt{.cmd = n(1), .stage = FailureStage::kBatch, .index = 5})
      .add(settle(1, 1))
      .add(msg_return("m0"))
      .add(flow(2, 1))
      .add(msg_return("m2"))
      .add(quiescent());
  const MonitorReport r = check(client(4, 2), t);
  EXPECT_TRUE(Clean(r));
  EXPECT_THAT(r.deviations, IsEmpty()) << dump(r);
}

TEST(MonitorClient, E5_LostPermitsAtQuiescenceAreReported) {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 3)).add(settle(1, 2)).add(quiescent());
  const MonitorReport r = check(client(4, 2), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kK5, {"1 permit lost"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE5,
                      {"consumer 0 on connection c1 at quiescence", "broker available 1",
                       "accumulator 2 = 3", "expected Q = 4", "1 permit lost"}));
}

TEST(MonitorModel, E5_FlowThatDrainedNoAccumulatorInventsPermits) {
  // Wire and client events together: a Flow written without its accumulator (no `inc`).
  Trace t;
  t.wire_subscribed(std::nullopt)
      .subscribed(1, 4)
      .add(message(1, 1))
      .add(recv(1, 1))
      .add(settle(1, 1))
      .add(flow(1))
      .add(quiescent());
  EXPECT_TRUE(FirstViolation(check(model(4, 2), t), RuleId::kE5,
                             {"broker available 4 + accumulator 1 = 5", "expected Q = 4",
                              "1 permit invented"}));
  Trace good;
  good.wire_subscribed(std::nullopt)
      .subscribed(1, 4)
      .add(message(1, 1))
      .add(recv(1, 1))
      .add(settle(1, 1))
      .add(quiescent());
  EXPECT_TRUE(Clean(check(model(4, 2), good)));
}

TEST(MonitorClient, E6_QuiescentWithNothingAvailableIsAStall) {
  Trace t;
  t.subscribed(1, 2)
      .add(recv(1, 2))
      .add(claim(1, "m0"))
      .add(claim(1, "m1"))
      .add(settle(1, 0))
      .add(quiescent());
  const MonitorReport r = check(client(2, 1), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kM1, {"2 messages of command 1"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE6,
                      {"consumer 0 on connection c1 is quiescent with broker available 0"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE5, {"2 permits lost"}));
}

// ---- Branches pinned by `ci/mutate --mode monitor` ----

// A connection's end ends every client permit state on it: a later Flow of one is N5.
TEST(MonitorClient, N5_DisconnectEndsTheIncarnationsOnTheConnection) {
  Trace t;
  t.subscribed(1, 4).add(Disconnect{.cnx = s("c1")}).add(flow(2, 1));
  EXPECT_TRUE(FirstViolation(check(client(4, 2), t), RuleId::kN5, {"incarnation 1", "after it ended"}));
}

// A state ending leaves the other states on its connection listed there: the connection's end
// still ends the state of a consumer subscribed after it, and a return to that state is N3.
TEST(MonitorClient, N3_DisconnectEndsTheStateOpenedAfterAnEndedOneOnTheConnection) {
  Trace t;
  t.subscribed(1, 4, "c1", 0)
      .subscribed(2, 4, "c1", 1)
      .add(recv(1, 1, {}, 2))
      .add(IncClose{.inc = n(1), .reason = CloseReason::kCloseConsumer})
      .add(Disconnect{.cnx = s("c1")})
      .add(settle(1, 1));
  EXPECT_TRUE(FirstViolation(check(client(4, 2), t), RuleId::kN3,
                             {"terminal transition of command 1 credits 1 permit to "
                              "incarnation 2, which has ended (must be dropped)"}));
}

// A message never returned is reported once, at the first quiescence (M1), not at every one.
TEST(MonitorClient, M1_MessageNeverReturnedIsReportedAtTheFirstQuiescenceOnly) {
  Trace t = handed_off();
  t.add(quiescent()).add(quiescent());
  const MonitorReport r = check(client(), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kM1,
                             {"1 message of command 1 never returned its permit"}));
  EXPECT_THAT(r.violations, Contains(HasRule(RuleId::kM1)).Times(1)) << dump(r);
}

// Units dropped while their state is current are lost once: M1 at the drop, and the command
// finished by the drop is not reported again as finishing short of P (E1).
TEST(MonitorClient, M1_E1_CommandUnitsDroppedWhileCurrentAreReportedOnceAsM1) {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 3)).add(Drop{.cmd = n(1), .n = 3});
  const MonitorReport r = check(client(), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kM1,
                             {"command 1 dropped 3 permits while incarnation 1 is current"}));
  EXPECT_THAT(r.violations, Not(Contains(HasRule(RuleId::kE1)))) << dump(r);
  EXPECT_THAT(r.violations, SizeIs(1)) << dump(r);
}

// A drop of a command's units is its terminal transition: the command finishes there, and a
// custom processor that returned other than P is the known deviation (X5) then.
TEST(MonitorClient, X5_CommandFinishedByTheDropOfItsUnitsIsJudgedAtTheDrop) {
  Trace t;
  t.subscribed(1, 16)
      .add(recv(1, 3))
      .add(Transfer{.cmd = n(1), .path = TransferPath::kProcessor})
      .add(DirectReturn{.cmd = n(1), .n = 2, .path = "processor"})
      .add(IncClose{.inc = n(1), .reason = CloseReason::kClosed})
      .add(Drop{.cmd = n(1), .n = 1});
  const MonitorReport r = check(client(16, 8), t);
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r);
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX5,
                      {"command 1 custom processor returned 2 for P = 3"}));
}

// A message handed off from a finished command takes no unit: K5 left the command at 0, so
// the hand-off is the fault (K5) and quiescence owes it no return (no M1). Returning it would
// credit a unit the command never owned: an over-return (E2).
TEST(MonitorClient, K5_M1_MessageHandedOffFromAFinishedCommandOwesNoReturnAtQuiescence) {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 2)).add(settle(1, 2)).add(claim(1, "m1")).add(quiescent());
  const MonitorReport r = check(client(), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kK5,
                             {"command 1 hands off message m1 after its terminal transition"}));
  EXPECT_THAT(r.violations, Not(Contains(HasRule(RuleId::kM1)))) << dump(r);
  Trace returned;
  returned.subscribed(1, 4).add(recv(1, 2)).add(settle(1, 2)).add(claim(1, "m1"));
  returned.add(msg_return("m1"));
  EXPECT_TRUE(Reports(check(client(), returned).violations, RuleId::kE2,
                      {"command 1 returned 3 permits but its P is 2"}));
}

TEST(MonitorMemory, ClientStateOfAnEndedConnectionIsReleased) {
  Monitor m(client(4, 2));
  Trace t;
  t.subscribed(1, 4);
  std::uint64_t line = 2;
  for (const Event& e : t.events()) m.on_event(e, line++);
  EXPECT_EQ(m.size().connections, 1u);
  m.on_event(Disconnect{.cnx = s("c1")}, line++);
  EXPECT_EQ(m.size().connections, 0u);
}

}  // namespace
}  // namespace permitcheck::spec
