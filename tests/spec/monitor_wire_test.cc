// The Monitor on wire events (spec/monitor_wire.cc) and its output: for each rule a small
// trace that breaks it (asserting the rule ID and the numbers) and the same trace done right.
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

// ======================================================================================
// Output: format_finding and line numbers.
// ======================================================================================

TEST(MonitorOutput, K5_FormatFindingIsLineRuleExplanation) {
  EXPECT_EQ(format_finding(Finding{.rule = RuleId::kK5,
                                   .line = 14,
                                   .explanation = "command 7 returned 9 permits but its P is 8"}),
            "line 14: K5 command 7 returned 9 permits but its P is 8");
  EXPECT_EQ(format_finding(Finding{.rule = RuleId::kB10, .line = 1, .explanation = "x"}),
            "line 1: B10 x");
}

TEST(MonitorOutput, K5_GoldenDiagnosticOfAShortSettle) {
  Trace t;
  t.subscribed(1, 4).add(recv(7, 3)).add(settle(7, 2));
  const MonitorReport r = check(client(), t);
  ASSERT_FALSE(r.violations.empty()) << dump(r);
  // Events are on lines 2..6 (line 1 is the header): the settle is line 6.
  EXPECT_EQ(format_finding(r.violations.front()),
            "line 6: K5 command 7 returned 2 permits when it finished (its terminal transition) "
            "where the rule returns 3 (P = 3, 0 handed to messages, 0 skipped, 0 returned "
            "directly); 1 permit lost");
}

TEST(MonitorOutput, K5_FindingsCarryTheLinePassedToOnEvent) {
  Monitor m(client());
  m.on_event(IncOpen{.inc = n(1), .cnx = s("c1"), .consumer = 0}, 10);
  m.on_event(IncFlowEnabled{.inc = n(1)}, 20);
  m.on_event(flow(4, 1), 30);
  m.on_event(recv(1, 3), 40);
  m.on_event(settle(1, 2), 57);
  m.finish();
  ASSERT_FALSE(m.violations().empty());
  EXPECT_EQ(m.violations().front().rule, RuleId::kK5);
  EXPECT_EQ(m.violations().front().line, 57u);
  EXPECT_THAT(m.violations(), Each(Field(&Finding::line, 57u)));
}

TEST(MonitorOutput, CheckTraceNumbersEventIOnLineIPlusTwo) {
  Trace t;
  t.add(Connect{.cnx = s("c1")})
      .add(Subscribe{.cnx = s("c1"), .consumer = 0})
      .add(flow(4));  // third event: line 4
  const MonitorReport r = check(wire(), t);
  ASSERT_THAT(r.violations, SizeIs(1)) << dump(r);
  EXPECT_EQ(r.violations.front().line, 4u);
}

TEST(MonitorOutput, LedgerShowsTheCommandAccounting) {
  Monitor m(client());
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 3, AckSet({37})))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(claim(1, "m0", 0))
      .add(claim(1, "m2", 2))
      .add(settle(1, 1))
      .add(msg_return("m0"));
  for (std::size_t i = 0; i < t.events().size(); ++i) m.on_event(t.events()[i], i + 2);
  m.finish();
  EXPECT_THAT(m.violations(), IsEmpty()) << dump(m.violations());
  const std::optional<CommandLedger> l = m.ledger(n(1));
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->inc, n(1));
  EXPECT_EQ(l->p, 3);
  EXPECT_EQ(l->claimed, 2);
  EXPECT_EQ(l->returned, 2);  // m2 is still out
  EXPECT_TRUE(l->settled);
  EXPECT_FALSE(m.ledger(n(99)).has_value());
}

// ======================================================================================
// Wire events: W1-W3, B2/B3/B7 from message batch_size, N4, over-grant E2, E5/E6 at quiescent.
// ======================================================================================

TEST(MonitorWire, W2_ZeroMessagePermitsIsReported) {
  for (std::uint64_t bad : {std::uint64_t{0}, kTwoTo31, kTwoTo32Minus1}) {
    SCOPED_TRACE(bad);
    Trace t;
    t.wire_subscribed(4).add(message(1, bad));
    EXPECT_TRUE(FirstViolation(
        check(wire(), t), RuleId::kW2,
        {"command 1 carries message_permits = " + std::to_string(bad), "outside 1..2^31-1"}));
  }
}

TEST(MonitorWire, ValuesOneToTwoTo31MinusOneAreValid) {
  for (std::uint64_t good : {std::uint64_t{1}, std::uint64_t{3}, kTwoTo31 - 1}) {
    SCOPED_TRACE(good);
    Trace t;
    t.wire_subscribed(4).add(message(1, good));
    EXPECT_TRUE(Clean(check(wire(), t)));
  }
}

TEST(MonitorWire, W3_FieldMissingAfterTheBrokerSentItIsReported) {
  Trace t;
  t.wire_subscribed(4).add(message(1, 1)).add(message(2, std::nullopt));
  EXPECT_TRUE(FirstViolation(check(wire(), t), RuleId::kW3,
                             {"command 2 lacks message_permits", "connection c1"}));
}

TEST(MonitorWire, W1_W3_AbsentFieldFromAnOldBrokerIsNeitherZeroNorAViolation) {
  // Presence is meaningful (W1): an absent field is not an invalid 0 (no W2), and a broker that
  // never sent it is an old broker, not an upgraded one that dropped it (no W3).
  Trace t;
  t.wire_subscribed(4).add(message(1, std::nullopt)).add(message(2, std::nullopt));
  EXPECT_TRUE(Clean(check(wire(), t)));
  // The field on another connection says nothing about this one.
  Trace other;
  other.wire_subscribed(4, "c2").add(message(1, 1, {}, std::nullopt, "c2"));
  other.wire_subscribed(4, "c1").add(message(2, std::nullopt));
  EXPECT_TRUE(Clean(check(wire(), other)));
}

TEST(MonitorWire, LegacyBrokerPromisesNoField) {
  Trace t;
  t.wire_subscribed(4).add(message(1, 1)).add(message(2, std::nullopt));
  EXPECT_TRUE(Clean(check(wire(4, 2, RulesetId::kLegacy), t)));
}

TEST(MonitorWire, B2_B7_SerializedValueMustBeTheBoundedPopcount) {
  // ack_set {0,2,5,9} of B = 8: bit 9 is beyond B (B2), so P = 3, not 4.
  const AckSet ack = AckSet::from_indexes({0, 2, 5, 9});
  Trace bad;
  bad.wire_subscribed(4).add(message(1, 4, ack, 8));
  EXPECT_TRUE(FirstViolation(check(wire(), bad), RuleId::kB7,
                             {"command 1 serialized message_permits = 4 but B = 8, "
                              "acknowledged {1,3,4,6,7}, bits {9} set beyond B give P = 3"}));
  Trace good;
  good.wire_subscribed(4).add(message(1, 3, ack, 8));
  EXPECT_TRUE(Clean(check(wire(), good)));
}

TEST(MonitorWire, B7_CompleteBatchAndNonBatchedCarryBAndOne) {
  Trace bad;
  bad.wire_subscribed(16).add(message(1, 1, {}, 8));  // complete batch of 8 serialized as 1
  EXPECT_TRUE(FirstViolation(check(wire(16, 8), bad), RuleId::kB7,
                             {"message_permits = 1 but B = 8 (no ack_set) give P = 8"}));
  Trace good;
  good.wire_subscribed(16).add(message(1, 8, {}, 8)).add(message(2, 1, {}, 1));
  EXPECT_TRUE(Clean(check(wire(16, 8), good)));
}

TEST(MonitorWire, B3_MessageWithNothingToDeliverIsReported) {
  for (const AckSet& ack : {AckSet({0}), AckSet::from_indexes({9})}) {
    Trace t;
    t.wire_subscribed(4).add(message(1, 1, ack, 8));
    EXPECT_TRUE(FirstViolation(check(wire(), t), RuleId::kB3,
                               {"command 1 was sent with nothing to deliver", "B = 8",
                                "deliverable 0"}));
  }
}

TEST(MonitorWire, N4_FlowBeforeSubscribeOkIsReported) {
  Trace t;
  t.add(Connect{.cnx = s("c1")}).add(Subscribe{.cnx = s("c1"), .consumer = 0}).add(flow(4));
  EXPECT_TRUE(FirstViolation(check(wire(), t), RuleId::kN4,
                             {"Flow of 4 for consumer 0 on connection c1",
                              "before its Subscribe succeeded"}));
  // After a refused Subscribe no Flow either. (After the broker closed the consumer, an old
  // Flow may still arrive: rulebook 12.12, monitor_flow_after_close_test.cc.)
  Trace refused;
  refused.add(Subscribe{.cnx = s("c1"), .consumer = 0})
      .add(SubscribeFail{.cnx = s("c1"), .consumer = 0})
      .add(flow(4));
  EXPECT_TRUE(FirstViolation(check(wire(), refused), RuleId::kN4, {"Flow of 4"}));
}

TEST(MonitorWire, FlowAfterSubscribeOkIsFine) {
  Trace t;
  t.wire_subscribed(4);
  EXPECT_TRUE(Clean(check(wire(), t)));
}

TEST(MonitorWire, E2_FlowAboveQIsAnOverGrant) {
  Trace t;
  t.wire_subscribed(4).add(message(1, 1)).add(flow(2));
  EXPECT_TRUE(FirstViolation(check(wire(), t), RuleId::kE2,
                             {"Flow of 2", "consumer 0 on connection c1 to 5", "above Q = 4",
                              "over-grant by 1"}));
  // Q from the first Flow when the header has none.
  EXPECT_TRUE(FirstViolation(check(wire(std::nullopt, std::nullopt), t), RuleId::kE2,
                             {"to 5, above Q = 4"}));
}

// A MESSAGE that shows neither message_permits nor batch_size, with no recorded send behind it,
// debits an unknown amount: the wire-derived available is no longer known, so a later Flow is
// not judged against Q (it would read 4 + 4 - 0 = 8 > 4). With a known debit it is.
TEST(MonitorWire, E2_FlowAfterAMessageOfUnknownDebitIsNotJudgedAnOverGrant) {
  Trace unknown;
  unknown.wire_subscribed(4).add(message(1, std::nullopt)).add(flow(4));
  const MonitorReport r = check(wire(), unknown);
  EXPECT_THAT(r.violations, Not(Contains(HasRule(RuleId::kE2)))) << dump(r);
  Trace known;
  known.wire_subscribed(4).add(message(1, 3)).add(flow(4));
  EXPECT_TRUE(FirstViolation(check(wire(), known), RuleId::kE2, {"to 5, above Q = 4"}));
}

// A client trace records Subscribes once it has a Subscribe or a SubscribeOk: from then on a
// Flow for a consumer with none on record is N4. Without either it is not judged.
TEST(MonitorWire, N4_ClientTraceWithASubscribeEventJudgesFlowsWithoutOne) {
  const Flow other{.cnx = s("c1"), .consumer = 1, .permits = 4};
  for (bool with_ok : {false, true}) {
    SCOPED_TRACE(with_ok ? "subscribe_ok" : "subscribe");
    Trace t;
    if (with_ok) t.add(SubscribeOk{.cnx = s("c1"), .consumer = 0});
    else t.add(Subscribe{.cnx = s("c1"), .consumer = 0});
    t.add(other);
    EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kN4,
                               {"Flow of 4 for consumer 1 on connection c1", "no Subscribe on record"}));
  }
  Trace none;
  none.add(other);
  const MonitorReport r = check(client(), none);
  EXPECT_THAT(r.violations, Not(Contains(HasRule(RuleId::kN4)))) << dump(r);
}

// A consumer whose Subscribe never succeeded has no broker permits to judge at quiescence: no
// stall (E6) for it. Once subscribed with no Flow, it is stalled.
TEST(MonitorWire, E6_QuiescenceBeforeTheSubscribeSucceededIsNotAStall) {
  Trace pending;
  pending.add(Connect{.cnx = s("c1")}).add(Subscribe{.cnx = s("c1"), .consumer = 0}).add(quiescent());
  const MonitorReport r = check(wire(), pending);
  EXPECT_THAT(r.violations, Not(Contains(HasRule(RuleId::kE6)))) << dump(r);
  Trace subscribed;
  subscribed.wire_subscribed(std::nullopt).add(quiescent());
  EXPECT_TRUE(FirstViolation(check(wire(), subscribed), RuleId::kE6, {"stalled"}));
}

TEST(MonitorWire, FlowReturningWhatWasDebitedIsFine) {
  Trace t;
  t.wire_subscribed(4).add(message(1, 3)).add(flow(2)).add(message(2, 1)).add(flow(2));
  EXPECT_TRUE(Clean(check(wire(), t)));
}

TEST(MonitorWire, LegacyDoesNotPromiseTheBound) {
  Trace t;
  t.wire_subscribed(4).add(message(1, 1)).add(flow(2));
  EXPECT_TRUE(Clean(check(wire(4, 2, RulesetId::kLegacy), t)));
}

TEST(MonitorWire, E5_QuiescentWithTheAccumulatorAtTIsReported) {
  Trace t;
  t.wire_subscribed(4).add(message(1, 3)).add(quiescent());
  EXPECT_TRUE(FirstViolation(check(wire(4, 2), t), RuleId::kE5,
                             {"consumer 0 on connection c1 at quiescence", "broker available 1",
                              "Q = 4", "leaves 3 permits unreturned", "where fewer than T = 2 may "
                                                                      "be"}));
}

TEST(MonitorWire, QuiescentWithTheAccumulatorBelowTIsFine) {
  Trace t;
  t.wire_subscribed(4).add(message(1, 3)).add(flow(2)).add(quiescent());  // accumulator 1 < T
  EXPECT_TRUE(Clean(check(wire(4, 2), t)));
}

TEST(MonitorWire, E5_E6_WithoutTOnlyTheWeakBoundApplies) {
  Trace stalled;
  stalled.wire_subscribed(4).add(message(1, 4)).add(quiescent());
  const MonitorReport r = check(wire(4, std::nullopt), stalled);
  EXPECT_TRUE(FirstViolation(r, RuleId::kE6, {"broker available 0", "stalled"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE5, {"broker available 0", "Q = 4",
                                                  "(must be in 1..Q)"}));
  // Without T, any available in 1..Q passes (3 unreturned would break T = 2).
  Trace weak;
  weak.wire_subscribed(4).add(message(1, 3)).add(quiescent());
  EXPECT_TRUE(Clean(check(wire(4, std::nullopt), weak)));
}

TEST(MonitorWire, E6_QuiescentWithNothingAvailableIsAStall) {
  Trace t;
  t.wire_subscribed(4).add(message(1, 4)).add(quiescent());
  EXPECT_TRUE(FirstViolation(check(wire(4, 2), t), RuleId::kE6,
                             {"consumer 0 on connection c1 is quiescent with broker available 0"}));
  Trace good;
  good.wire_subscribed(4).add(message(1, 4)).add(flow(2)).add(flow(2)).add(quiescent());
  EXPECT_TRUE(Clean(check(wire(4, 2), good)));
}

TEST(MonitorWire, LegacyDoesNotPromiseConservation) {
  Trace t;
  t.wire_subscribed(4).add(message(1, std::nullopt, {}, 4)).add(quiescent());
  EXPECT_TRUE(Clean(check(wire(4, 2, RulesetId::kLegacy), t)));
}

TEST(MonitorWire, BatchDebtIsSignedAndNeverClamped) {
  // Q = 1: a batch of 10 leaves -9; returning its 10 permits brings the balance to exactly 1.
  Trace t;
  t.wire_subscribed(1).add(message(1, 10, {}, 10)).add(flow(10)).add(quiescent());
  EXPECT_TRUE(Clean(check(wire(1, 1), t)));
  // Returning 9 (as a client would after a clamp at 0 took the debt away) leaves 0: a stall.
  Trace short_return;
  short_return.wire_subscribed(1).add(message(1, 10, {}, 10)).add(flow(9)).add(quiescent());
  EXPECT_TRUE(FirstViolation(check(wire(1, 1), short_return), RuleId::kE6,
                             {"broker available 0"}));
}


TEST(MonitorWire, N4_LegacyFlowBeforeSubscribeOkIsNotAPermitStateRule) {
  // Legacy Pulsar has no permit states: a queued Flow written before the Subscribe of the
  // replacement succeeded is L11's mechanism, reported under rev-d only.
  Trace t;
  t.add(Connect{.cnx = s("c1")}).add(Subscribe{.cnx = s("c1"), .consumer = 0}).add(flow(4));
  EXPECT_THAT(check(wire(4, 2, RulesetId::kLegacy), t).violations,
              Not(Contains(HasRule(RuleId::kN4))));
  EXPECT_TRUE(FirstViolation(check(wire(4, 2, RulesetId::kRevD), t), RuleId::kN4, {"Flow of 4"}));
}

// ---- Branches pinned by `ci/mutate --mode monitor` ----

// A client trace that records Subscribes at all holds every wire Flow to one on record.
TEST(MonitorWire, N4_ClientTraceWithSubscribesReportsAFlowOfAConsumerThatNeverSubscribed) {
  Trace t;
  t.wire_subscribed(4).add(Flow{.cnx = s("c1"), .consumer = 1, .permits = 4});
  EXPECT_TRUE(Reports(check(client(4, 2), t).violations, RuleId::kN4,
                      {"consumer 1", "no Subscribe on record"}));
  Trace none;  // no Subscribe anywhere in a client trace: nothing to hold the Flow to
  none.add(Connect{.cnx = s("c1")}).add(Flow{.cnx = s("c1"), .consumer = 1, .permits = 4});
  EXPECT_THAT(check(client(4, 2), none).violations, Not(Contains(HasRule(RuleId::kN4))));
}

// The end of a consumer's old connection leaves its wire state on the new one in place: a
// send at zero available there is still judged. Both orders: the consumer closed on c1 before
// subscribing on c2, and subscribed on c2 while still listed on c1 (c1's end not yet seen),
// where c1's Disconnect must end c1's wire state only.
TEST(MonitorWire, B12_OldConnectionEndingKeepsTheConsumersNewConnectionJudged) {
  for (bool closed_first : {true, false}) {
    SCOPED_TRACE(closed_first ? "closed on c1 first" : "still listed on c1");
    Trace t;
    t.wire_subscribed(1, "c1");
    if (closed_first) t.add(CloseConsumer{.cnx = s("c1"), .consumer = 0});
    t.wire_subscribed(1, "c2")
        .add(message(1, 1, {}, std::nullopt, "c2"))
        .add(Disconnect{.cnx = s("c1")})
        .add(Send{.consumer = 0,
                  .dispatcher = DispatcherKind::kSingleActive,
                  .entries = {entry(2, 1, true, 1)},
                  .consumer_debit = 1});
    EXPECT_TRUE(FirstViolation(check(wire(1, 1), t), RuleId::kB12,
                               {"send to consumer 0", "on connection c2",
                                "available permits are 0"}));
  }
}

// Closing one consumer leaves the others on its connection listed there: the connection's
// end still ends the wire state of the consumer subscribed after it, so a later Flow for that
// consumer has no Subscribe on record (N4).
TEST(MonitorWire, N4_DisconnectEndsTheWireStateOfAConsumerSubscribedAfterOneClosed) {
  Trace t;
  t.wire_subscribed(4, "c1", 0)
      .wire_subscribed(4, "c1", 1)
      .add(CloseConsumer{.cnx = s("c1"), .consumer = 0})
      .add(Disconnect{.cnx = s("c1")})
      .add(Flow{.cnx = s("c1"), .consumer = 1, .permits = 1});
  EXPECT_TRUE(FirstViolation(check(wire(), t), RuleId::kN4,
                             {"Flow of 1 for consumer 1 on connection c1",
                              "no Subscribe on record"}));
}

// A Flow written before the Subscribe succeeded is credited by the broker all the same (B10):
// the send after the Subscribe succeeded starts at positive available, no B12. Without that
// Flow it starts at 0.
TEST(MonitorWire, B12_FlowBeforeSubscribeOkCountsTowardTheBrokersAvailable) {
  Trace early;
  early.add(Connect{.cnx = s("c1")})
      .add(Subscribe{.cnx = s("c1"), .consumer = 0})
      .add(flow(4))
      .add(SubscribeOk{.cnx = s("c1"), .consumer = 0})
      .add(message(1, 1));
  EXPECT_TRUE(Clean(check(wire(4, 2, RulesetId::kLegacy), early)));
  const MonitorReport rev_d = check(wire(), early);
  EXPECT_TRUE(FirstViolation(rev_d, RuleId::kN4, {"Flow of 4", "before its Subscribe succeeded"}));
  EXPECT_THAT(rev_d.violations, Not(Contains(HasRule(RuleId::kB12)))) << dump(rev_d);
  Trace none;
  none.wire_subscribed(std::nullopt).add(message(1, 1));
  EXPECT_TRUE(FirstViolation(check(wire(4, 2, RulesetId::kLegacy), none), RuleId::kB12,
                             {"available permits are 0"}));
}

// The client's receive event need not repeat message_permits: the MESSAGE on the wire gave
// P = 8 for the complete batch, so an early (checksum) failure returning 8 is exact. Judged
// without the wire's field, it would be the field-absent fallback of 1 (X1) instead.
// Wire only, at quiescence: the accumulator Q - available must be below T, so exactly T
// unreturned is E5; without T, available must be in 1..Q, Q included.
TEST(MonitorWire, E5_WireQuiescenceBoundsAreExact) {
  Trace at_t;
  at_t.wire_subscribed(4).add(message(1, 2)).add(quiescent());
  EXPECT_TRUE(FirstViolation(check(wire(4, 2), at_t), RuleId::kE5,
                             {"broker available 2 with Q = 4 leaves 2 permits unreturned, "
                              "where fewer than T = 2 may be"}));
  Trace below_t;
  below_t.wire_subscribed(4).add(message(1, 1)).add(quiescent());
  EXPECT_TRUE(Clean(check(wire(4, 2), below_t)));
  Trace full;
  full.wire_subscribed(4).add(quiescent());
  EXPECT_TRUE(Clean(check(wire(4, std::nullopt), full)));
}

// Available above Q is said as what it is (permits returned too many), never as a negative
// number left unreturned.
TEST(MonitorWire, E5_AvailableAboveQIsPermitsReturnedTooMany) {
  Trace over;
  over.wire_subscribed(4).add(flow(1)).add(quiescent());
  const MonitorReport r = check(wire(4, 2), over);
  EXPECT_TRUE(Reports(r.violations, RuleId::kE5,
                      {"broker available 5 with Q = 4 is 1 permit above Q: the client returned "
                       "1 permit too many"}))
      << dump(r);
  for (const Finding& f : r.violations) EXPECT_THAT(f.explanation, Not(::testing::HasSubstr("-1")));
}

// A MESSAGE's ack_set is the command's: what its P is, with no field, is counted from it.
TEST(MonitorWire, AMessagesAckSetIsItsCommandsForItsLedger) {
  Trace t;
  t.wire_subscribed(8).add(message(1, std::nullopt, AckSet::from_indexes({1, 2, 3}), 4));
  Monitor m(wire(8, 4));
  for (std::size_t i = 0; i < t.events().size(); ++i) m.on_event(t.events()[i], i + 2);
  const std::optional<CommandLedger> l = m.ledger(n(1));
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->p, 3);  // indexes 1-3 of B = 4 deliverable (without the ack_set: 4)
}

// A command the client received is the client's to finish: its wire acknowledgement before its
// terminal transition does not release it.
TEST(MonitorWire, AnAcknowledgementBeforeTheTerminalTransitionKeepsAReceivedCommand) {
  Trace t;
  t.wire_subscribed(std::nullopt)
      .subscribed(1, 4)
      .add(message(1, 1, {}, 1))
      .add(recv(1, 1))
      .add(Metadata{.cmd = n(1), .batch_size = 1})
      .add(claim(1, "m0"))
      .add(Ack{.cnx = s("c1"), .consumer = 0, .cmd = n(1)})
      .add(settle(1, 0))
      .add(msg_return("m0"));
  const MonitorReport r = check(model(4, 2), t);
  EXPECT_TRUE(Clean(r));
  Monitor m(model(4, 2));
  for (std::size_t i = 0; i < t.events().size(); ++i) m.on_event(t.events()[i], i + 2);
  const std::optional<CommandLedger> l = m.ledger(n(1));
  ASSERT_TRUE(l.has_value());
  EXPECT_TRUE(l->settled);
  EXPECT_EQ(l->returned, 1);
}

TEST(MonitorWire, WireMessagePermitsJudgeAReceiveThatDoesNotRecordThem) {
  Trace t;
  t.wire_subscribed(std::nullopt)
      .subscribed(1, 16)
      .add(message(1, 8, {}, 8))
      .add(recv(1, std::nullopt))
      .add(Corrupt{.cmd = n(1), .stage = FailureStage::kChecksum})
      .add(settle(1, 8))
      .add(flow(8, 1))
      .add(quiescent());
  const MonitorReport r = check(model(16, 8), t);
  EXPECT_TRUE(Clean(r));
}

// The trace format makes a command id unique, but a recorder can still reuse one on the wire;
// the monitor then judges the command by its latest MESSAGE: the consumer it went to last owns
// it (the first consumer's end does not release it) ...
TEST(MonitorWire, ACommandIdSentAgainToASecondConsumerBelongsToTheSecond) {
  Trace t;
  t.wire_subscribed(16, "c1", 0)
      .add(Subscribe{.cnx = s("c1"), .consumer = 1})
      .add(SubscribeOk{.cnx = s("c1"), .consumer = 1})
      .subscribed(1, 16, "c1", 1)
      .add(Message{.cnx = s("c1"), .consumer = 0, .cmd = n(7), .message_permits = 2, .batch_size = 2})
      .add(Message{.cnx = s("c1"), .consumer = 1, .cmd = n(7), .message_permits = 2, .batch_size = 2})
      .add(CloseConsumer{.cnx = s("c1"), .consumer = 0})
      .add(recv(7, std::nullopt))
      .add(Resolve{.cmd = n(7), .p = 2, .source = PermitSource::kExplicit});
  Monitor m(model(16, 8));
  for (std::size_t i = 0; i < t.events().size(); ++i) m.on_event(t.events()[i], i + 2);
  EXPECT_TRUE(Clean({m.violations(), m.deviations()}));
  const std::optional<CommandLedger> l = m.ledger(n(7));
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->p, 2);  // the wire's value, still known when the client receives it
}

// ... and a client's earlier validation of it does not stand for the later one (C1).
TEST(MonitorWire, C1_AResolveAfterTheIdIsSentAgainIsJudgedByTheLaterMessage) {
  Trace t;
  t.wire_subscribed(16)
      .subscribed(1, 16)
      .add(message(7, 2, {}, 2))
      .add(recv(7, std::nullopt))
      .add(Metadata{.cmd = n(7), .batch_size = 2})
      .add(message(7, 1, {}, 1))
      .add(Resolve{.cmd = n(7), .p = 2, .source = PermitSource::kExplicit});
  EXPECT_TRUE(Reports(check(model(16, 8), t).violations, RuleId::kC1,
                      {"command 7 resolved P = 2", "the ladder gives 1"}));
}

}  // namespace
}  // namespace permitcheck::spec
