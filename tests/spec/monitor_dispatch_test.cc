// The Monitor on back-pressure and dispatch progress (B12, B13; E6 extended), and the three
// decision branches issue 19 names (a later terminal transition returning units, a deviation
// excusing exactly its units, K8 at P + 1), each directed elsewhere and here as a property over
// random commands.
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

int count(const std::vector<Finding>& findings, RuleId rule) {
  return static_cast<int>(std::count_if(findings.begin(), findings.end(),
                                        [rule](const Finding& f) { return f.rule == rule; }));
}

Send send_of(std::vector<SentEntry> entries, std::int64_t debit) {
  return Send{.consumer = 0,
              .dispatcher = DispatcherKind::kSingleActive,
              .entries = std::move(entries),
              .consumer_debit = debit};
}

// ---- B12: back-pressure ----

TEST(MonitorWire, B12_MessageSentWhileAvailableIsNotPositiveIsReported) {
  Trace t;
  t.wire_subscribed(2).add(message(1, 2)).add(message(2, 1));
  EXPECT_TRUE(FirstViolation(check(wire(2, 1), t), RuleId::kB12,
                             {"command 2 sent to consumer 0 on connection c1",
                              "available permits are 0",
                              "a send starts only while available > 0"}));
}

// Back-pressure is judged only on a precise count: after a MESSAGE whose P nothing tells (no
// field, no batch size, no send), the broker's available is unknown and no B12 is reported.
TEST(MonitorWire, B12_IsNotJudgedOnceTheAvailableCountIsImprecise) {
  Trace t;
  t.wire_subscribed(1).add(message(1, std::nullopt)).add(message(2, 1)).add(message(3, 1));
  const MonitorReport r = check(wire(std::nullopt, std::nullopt), t);
  EXPECT_EQ(count(r.violations, RuleId::kB12), 0) << dump(r);
}

// A MESSAGE without the field takes its P from the send that finalized it, so the count stays
// precise: the next send at 0 available is B12.
TEST(MonitorBroker, B12_AMessageWithoutTheFieldIsDebitedItsSendsP) {
  Trace t;
  t.wire_subscribed(3)
      .add(send_of({entry(1, 3, true, 3)}, 3))
      .add(message(1, std::nullopt))
      .add(send_of({entry(2, 1, true, 1)}, 1));
  EXPECT_TRUE(FirstViolation(check(wire(3, 1), t), RuleId::kB12,
                             {"send to consumer 0", "available permits are 0"}));
}

// A broker consumer removed (B11) and then subscribed again is a consumer again: a send to it
// is no B11.
TEST(MonitorBroker, B11_AConsumerSubscribedAgainAfterItsRemovalMaySendAgain) {
  Trace t;
  t.add(ConsumerRemoved{.consumer = 0}).wire_subscribed(4).add(send_of({entry(1, 1, true, 1)}, 1));
  const MonitorReport r = check(wire(4, 2), t);
  EXPECT_EQ(count(r.violations, RuleId::kB11), 0) << dump(r);
  Trace removed;
  removed.wire_subscribed(4).add(ConsumerRemoved{.consumer = 0}).add(send_of({entry(1, 1, true, 1)}, 1));
  EXPECT_TRUE(Reports(check(wire(4, 2), removed).violations, RuleId::kB11,
                      {"send to consumer 0 after it was removed"}));
}

TEST(MonitorWire, B12_MessageBeforeAnyFlowIsReported) {
  Trace t;
  t.wire_subscribed(std::nullopt).add(message(1, 1));
  EXPECT_TRUE(FirstViolation(check(wire(4, 2), t), RuleId::kB12, {"available permits are 0"}));
}

TEST(MonitorWire, B9_B12_OverdraftInsideASendThatStartedPositiveIsFine) {
  // +1 admits P = 10 (B9: -9); the next send waits for Flows that make available positive.
  Trace t;
  t.wire_subscribed(1).add(message(1, 10)).add(flow(10)).add(message(2, 1));
  EXPECT_TRUE(Clean(check(wire(std::nullopt, std::nullopt), t)));
  Trace early;  // the same second send before the Flow starts at -9
  early.wire_subscribed(1).add(message(1, 10)).add(message(2, 1));
  EXPECT_TRUE(FirstViolation(check(wire(std::nullopt, std::nullopt), early), RuleId::kB12,
                             {"available permits are -9"}));
}

TEST(MonitorBroker, B12_SendStartedAtZeroAvailableIsReportedOnce) {
  Trace t;
  t.wire_subscribed(1)
      .add(send_of({entry(1, 1, true, 1)}, 1))
      .add(message(1, 1))
      .add(send_of({entry(2, 1, true, 1)}, 1))
      .add(message(2, 1));
  const MonitorReport r = check(wire(1, 1), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kB12, {"send to consumer 0", "available permits are 0"}));
  EXPECT_EQ(count(r.violations, RuleId::kB12), 1) << dump(r);  // its MESSAGE is the same send
}

TEST(MonitorBroker, B9_B12_MessagesOfASendThatStartedPositiveMayOverdraw) {
  // One send of two entries at available 1: the second frame leaves -1 (B9), not B12.
  Trace t;
  t.wire_subscribed(1)
      .add(send_of({entry(1, 1, true, 1), entry(2, 1, true, 1)}, 2))
      .add(message(1, 1))
      .add(message(2, 1));
  const MonitorReport r = check(wire(std::nullopt, std::nullopt), t);
  EXPECT_EQ(count(r.violations, RuleId::kB12), 0) << dump(r);
}

// ---- B13: dispatch progress (E6) ----

TEST(MonitorWire, B13_BacklogWithPositivePermitsAtQuiescenceIsReported) {
  Trace t;
  t.wire_subscribed(4).add(Quiescent{.cnx = s("c1"), .consumer = 0, .backlog = 3});
  EXPECT_TRUE(FirstViolation(check(wire(4, 2), t), RuleId::kB13,
                             {"backlog 3", "broker available 4", "no dispatch"}));
}

// The smallest backlog with the smallest positive available is B13 already.
TEST(MonitorWire, B13_ABacklogOfOneWithOnePermitIsReported) {
  Trace t;
  t.wire_subscribed(4).add(message(1, 3)).add(Quiescent{.cnx = s("c1"), .consumer = 0,
                                                        .backlog = 1});
  EXPECT_TRUE(FirstViolation(check(wire(4, 4), t), RuleId::kB13,
                             {"backlog 1", "broker available 1", "no dispatch"}));
}

TEST(MonitorWire, NoBacklogOrUnknownBacklogWithPositivePermitsIsFine) {
  Trace none;
  none.wire_subscribed(4).add(Quiescent{.cnx = s("c1"), .consumer = 0, .backlog = 0});
  EXPECT_TRUE(Clean(check(wire(4, 2), none)));
  Trace unknown;
  unknown.wire_subscribed(4).add(quiescent());
  EXPECT_TRUE(Clean(check(wire(4, 2), unknown)));
}

TEST(MonitorWire, B13_E6_BacklogWithNoPermitsIsTheStallNotB13) {
  Trace t;
  t.wire_subscribed(1).add(message(1, 1)).add(Quiescent{.cnx = s("c1"), .consumer = 0,
                                                        .backlog = 2});
  const MonitorReport r = check(wire(1, std::nullopt), t);
  EXPECT_EQ(count(r.violations, RuleId::kB13), 0) << dump(r);
  EXPECT_TRUE(Reports(r.violations, RuleId::kE6, {"stalled"}));
}

// ---- The three branches, as properties ----

// One command of P = p handing off k messages, settling what is left and returning them all.
Trace command_with_hand_offs(std::int64_t p, std::int64_t k) {
  Trace t;
  t.subscribed(1, 16).add(recv(1, static_cast<std::uint64_t>(p)));
  for (std::int64_t i = 0; i < k; ++i) t.add(claim(1, "m" + std::to_string(i)));
  t.add(settle(1, std::max<std::int64_t>(0, p - k)));
  for (std::int64_t i = 0; i < k; ++i) t.add(msg_return("m" + std::to_string(i)));
  return t;
}

RC_GTEST_PROP(MonitorClient, K8_ReportedExactlyWhenHandOffsExceedP, ()) {
  const std::int64_t p = *rc::gen::inRange<std::int64_t>(1, 8);
  const std::int64_t k = *rc::gen::inRange<std::int64_t>(0, p + 3);
  const MonitorReport r = check(client(16, 8), command_with_hand_offs(p, k));
  RC_ASSERT((count(r.violations, RuleId::kK8) > 0) == (k > p));
  if (k > p) RC_ASSERT(r.violations.front().rule == RuleId::kK8);
}

RC_GTEST_PROP(MonitorClient, K5_LaterTerminalTransitionIsReportedExactlyWhenItReturnsUnits, ()) {
  const std::int64_t p = *rc::gen::inRange<std::int64_t>(1, 8);
  const std::int64_t k = *rc::gen::inRange<std::int64_t>(0, p + 1);
  const std::int64_t again = *rc::gen::inRange<std::int64_t>(-1, 4);
  Trace t = command_with_hand_offs(p, k);
  t.add(settle(1, again));
  const MonitorReport r = check(client(16, 8), t);
  RC_ASSERT((count(r.violations, RuleId::kK5) > 0) == (again != 0));
  RC_ASSERT((count(r.violations, RuleId::kE2) > 0) == (again > 0));  // p + again > P
}

// X4 withholds `held` units; a second command of P = 4 settles `lost` short of what it owns
// (K5). At quiescence the deviation excuses exactly its own units: E5 iff lost > 0.
RC_GTEST_PROP(MonitorDeviation, X4_E5_DeviationExcusesExactlyItsUnits, ()) {
  const std::int64_t held = *rc::gen::inRange<std::int64_t>(1, 5);
  const std::int64_t lost = *rc::gen::inRange<std::int64_t>(0, 3);
  Trace t;
  t.subscribed(1, 16)
      .add(recv(1, static_cast<std::uint64_t>(held)))
      .add(Metadata{.cmd = n(1), .batch_size = held})
      .add(Transfer{.cmd = n(1), .path = TransferPath::kChunk})
      .add(settle(1, 0))
      .add(recv(2, 4))
      .add(settle(2, 4 - lost))
      .add(quiescent());
  const MonitorReport r = check(client(16, 8), t);
  RC_ASSERT(count(r.deviations, RuleId::kX4) > 0);
  RC_ASSERT((count(r.violations, RuleId::kE5) > 0) == (lost > 0));
}


// ---- X7: a real broker's sends seen through a tap (MonitorOptions::sends_span_frames) ----

MonitorReport check_spanning(const TraceHeader& h, const Trace& t) {
  Monitor m(h, MonitorOptions{.sends_span_frames = true});
  for (std::size_t i = 0; i < t.events().size(); ++i) m.on_event(t.events()[i], i + 2);
  m.finish();
  return {m.violations(), m.deviations()};
}

// Pulsar 4.2.4's single-active dispatcher, measured: Flow 10, then six entries of 10 written
// in one dispatch. Frames 2-6 follow frame 1 (sent at 10) with nothing between: B12 is not
// decided, each is known deviation X7 with its overdraft. Judged as one send per frame (the
// option off), the same trace is B12.
TEST(MonitorWire, X7_FramesFollowingAFrameSentAtPositiveAvailableAreNotB12) {
  Trace t;
  t.wire_subscribed(10);
  for (std::uint64_t cmd = 1; cmd <= 6; ++cmd) t.add(message(cmd, std::nullopt, {}, 10));
  const MonitorReport r = check_spanning(wire(10, 5, RulesetId::kLegacy), t);
  EXPECT_EQ(count(r.violations, RuleId::kB12), 0) << dump(r);
  EXPECT_EQ(count(r.deviations, RuleId::kX7), 5) << dump(r);
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX7,
                      {"command 2 sent to consumer 0", "at available permits 0",
                       "follows command 1", "sent at 10", "B12 is not decided"}));
  EXPECT_EQ(count(check(wire(10, 5, RulesetId::kLegacy), t).violations, RuleId::kB12), 5);
}

// A run ends at any other broker frame on the connection: a MESSAGE after it at available 0
// starts a send of its own, and that is B12. So is a run whose first frame was sent at 0.
TEST(MonitorWire, B12_AFrameAfterAnotherBrokerFrameOrARunBegunAtZeroIsStillReported) {
  Trace other;  // consumer 1's frame on the same connection ends consumer 0's run
  other.wire_subscribed(10)
      .add(Subscribe{.cnx = s("c1"), .consumer = 1})
      .add(SubscribeOk{.cnx = s("c1"), .consumer = 1})
      .add(Flow{.cnx = s("c1"), .consumer = 1, .permits = 10})
      .add(message(1, std::nullopt, {}, 10))
      .add(Message{.cnx = s("c1"), .consumer = 1, .cmd = n(2), .batch_size = 1})
      .add(message(3, std::nullopt, {}, 10));
  EXPECT_TRUE(FirstViolation(check_spanning(wire(10, 5, RulesetId::kLegacy), other), RuleId::kB12,
                             {"command 3 sent to consumer 0", "available permits are 0"}));
  Trace zero;  // no Flow: the run's first frame is sent at 0
  zero.wire_subscribed(std::nullopt).add(message(1, 1)).add(message(2, 1));
  const MonitorReport r = check_spanning(wire(4, 2), zero);
  EXPECT_EQ(count(r.violations, RuleId::kB12), 2) << dump(r);
  EXPECT_EQ(count(r.deviations, RuleId::kX7), 0) << dump(r);
}

}  // namespace
}  // namespace permitcheck::spec
