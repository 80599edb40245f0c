// Rulebook section 12, item 12 (spec/monitor_wire.cc, flow_before_subscribed): a Flow of an
// incarnation the broker has closed, arriving after its CLOSE_CONSUMER and before the
// replacement's Subscribe on that connection, is an old Flow written before the replacement's
// Subscribe (N6 allows it) and no violation of N4; it is one when it arrives after the
// replacement's Subscribe (N6) or its credit reaches the replacement (E2 on the wire, N6 on
// the client's permit states).
#include <cstdint>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/monitor.h"
#include "tests/spec/monitor_testing.h"

namespace permitcheck::spec {
namespace {

using namespace monitor_testing;  // NOLINT: the shared shorthands of the monitor's tests

// Consumer 0 on c1 subscribed with Q = 4, then closed by CLOSE_CONSUMER.
Trace closed_consumer() {
  Trace t;
  t.wire_subscribed(4).add(CloseConsumer{.cnx = s("c1"), .consumer = 0});
  return t;
}

Trace& resubscribe(Trace& t) { return t.add(Subscribe{.cnx = s("c1"), .consumer = 0}); }
Trace& subscribe_ok(Trace& t) { return t.add(SubscribeOk{.cnx = s("c1"), .consumer = 0}); }

TEST(MonitorFlowAfterClose, N4_OldFlowBeforeTheReplacementsSubscribeIsNoViolation) {
  Trace t = closed_consumer();
  t.add(flow(3));  // the old incarnation's Flow, crossing the close
  resubscribe(t);
  subscribe_ok(t).add(flow(4));
  const MonitorReport r = check(wire(), t);
  EXPECT_TRUE(Clean(r)) << dump(r);
  EXPECT_THAT(r.violations, Not(Contains(HasRule(RuleId::kN4))));
  // No replacement at all: the same (the consumer was closed for good).
  Trace alone = closed_consumer();
  alone.add(flow(3)).add(flow(1));
  EXPECT_TRUE(Clean(check(wire(), alone))) << dump(check(wire(), alone));
}

// The broker credits that Flow to nobody: the replacement starts at Q, and a fifth message at
// Q = 4 is sent at zero available (B12), as without the old Flow.
TEST(MonitorFlowAfterClose, B12_TheOldFlowIsCreditedToNobody) {
  Trace t = closed_consumer();
  t.add(flow(3));
  resubscribe(t);
  subscribe_ok(t).add(flow(4));
  for (std::uint64_t cmd = 1; cmd <= 5; ++cmd) t.add(message(cmd, 1, {}, 1));
  EXPECT_TRUE(FirstViolation(check(wire(), t), RuleId::kB12, {"available permits are 0"}));
}

TEST(MonitorFlowAfterClose, N6_OldFlowAfterTheReplacementsSubscribeIsReported) {
  Trace t = closed_consumer();
  resubscribe(t).add(flow(3));
  subscribe_ok(t).add(flow(4));
  const MonitorReport r = check(wire(), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kN6,
                             {"Flow of 3 for consumer 0 on connection c1",
                              "after the Subscribe of the incarnation replacing the closed one",
                              "old Flow written after the replacement's Subscribe (N6)"}))
      << dump(r);
}

// The old count granted again by the replacement: an over-grant on the wire (E2).
TEST(MonitorFlowAfterClose, E2_OldCreditReachingTheReplacementIsReported) {
  Trace t = closed_consumer();
  resubscribe(t);
  subscribe_ok(t).add(flow(4)).add(flow(3));
  EXPECT_TRUE(FirstViolation(check(wire(), t), RuleId::kE2,
                             {"Flow of 3", "to 7, above Q = 4", "over-grant by 3"}));
}

// With the client's permit states on record, the old state's Flow written after its
// replacement opened is N6 wherever it falls on the wire.
TEST(MonitorFlowAfterClose, N6_ClientFlowOfTheEndedStateAfterItsReplacementOpenedIsReported) {
  Trace t;
  t.wire_subscribed(std::nullopt)
      .subscribed(1, 4)
      .add(CloseConsumer{.cnx = s("c1"), .consumer = 0})
      .add(IncClose{.inc = n(1), .reason = CloseReason::kCloseConsumer})
      .add(Subscribe{.cnx = s("c1"), .consumer = 0})
      .add(IncOpen{.inc = n(2), .cnx = s("c1"), .consumer = 0})
      .add(flow(3, 1));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kN6,
                             {"Flow of 3 for ended incarnation 1", "replacement 2"}))
      << dump(check(client(), t));
}

// A consumer never subscribed on the connection, or whose Subscribe failed, has no old
// incarnation: its Flow is still N4.
TEST(MonitorFlowAfterClose, N4_FlowWithoutAClosedIncarnationIsStillReported) {
  Trace refused;
  refused.add(Connect{.cnx = s("c1")})
      .add(Subscribe{.cnx = s("c1"), .consumer = 0})
      .add(SubscribeFail{.cnx = s("c1"), .consumer = 0})
      .add(flow(4));
  EXPECT_TRUE(FirstViolation(check(wire(), refused), RuleId::kN4, {"Flow of 4"}));
  // Closed on another connection: a Flow on this one has no old incarnation here.
  Trace elsewhere = closed_consumer();
  elsewhere.add(Connect{.cnx = s("c2")}).add(flow(1, std::nullopt, "c2"));
  EXPECT_TRUE(FirstViolation(check(wire(), elsewhere), RuleId::kN4,
                             {"Flow of 1 for consumer 0 on connection c2"}));
  // The connection's end forgets the closed consumer: a Flow after it is N4 again.
  Trace lost = closed_consumer();
  lost.add(Disconnect{.cnx = s("c1")}).add(flow(1));
  EXPECT_TRUE(FirstViolation(check(wire(), lost), RuleId::kN4, {"no Subscribe on record"}));
  // The replacement's own Flow before its Subscribe succeeded, with no closed predecessor.
  Trace early;
  early.add(Connect{.cnx = s("c1")}).add(Subscribe{.cnx = s("c1"), .consumer = 0}).add(flow(4));
  EXPECT_TRUE(FirstViolation(check(wire(), early), RuleId::kN4,
                             {"before its Subscribe succeeded"}));
}

// Legacy writes such Flows (L11): none of these is judged under it.
TEST(MonitorFlowAfterClose, N6_LegacyIsNotJudged) {
  Trace t = closed_consumer();
  resubscribe(t).add(flow(3));
  const MonitorReport r = check(wire(4, 2, RulesetId::kLegacy), t);
  EXPECT_THAT(r.violations, Not(Contains(HasRule(RuleId::kN6)))) << dump(r);
}

// Consumers closed in order on one connection cost one run, not one entry each.
TEST(MonitorFlowAfterClose, ClosedConsumersAwaitingReplacementCostLittle) {
  Monitor m(wire(4, 2), MonitorOptions{.retain_ledger = false});
  std::uint64_t line = 2;
  m.on_event(Connect{.cnx = s("c1")}, line++);
  for (std::uint64_t i = 0; i < 10'000; ++i) {
    m.on_event(Subscribe{.cnx = s("c1"), .consumer = i}, line++);
    m.on_event(SubscribeOk{.cnx = s("c1"), .consumer = i}, line++);
    m.on_event(Flow{.cnx = s("c1"), .consumer = i, .permits = 4}, line++);
    m.on_event(CloseConsumer{.cnx = s("c1"), .consumer = i}, line++);
    m.on_event(Flow{.cnx = s("c1"), .consumer = i, .permits = 1}, line++);
  }
  EXPECT_LT(m.size().bytes, std::size_t{64} << 10) << "largest part: " << m.size().largest();
  EXPECT_TRUE(m.violations().empty());
}

}  // namespace
}  // namespace permitcheck::spec
