// One verdict, whatever the mode (issue 18): the Monitor judges a trace the same way streaming
// (MonitorOptions{.retain_ledger = false}, as validate and replay run it) and whole-trace
// (retain_ledger = true, as render runs it), reused ids included; its sums never wrap; its
// memory stays bounded by what is in flight.
#include "spec/monitor.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidcheck.h"
#include "rapidcheck/gtest.h"
#include "tests/spec/monitor_testing.h"
#include "tests/testing/address_sanitizer.h"
#include "tests/testing/limited_child.h"

namespace permitcheck::spec {
namespace {

using namespace monitor_testing;  // NOLINT: the shared shorthands of the monitor's tests

constexpr std::int64_t kMax64 = std::numeric_limits<std::int64_t>::max();


// Command 1 (P = 1) on incarnation 1: handed off as m0, settled, m0 returned: finished.
Trace finished_command() {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 1)).add(claim(1, "m0")).add(settle(1, 0)).add(msg_return("m0"));
  return t;
}

// ---- Reused ids after the command finished ----

TEST(MonitorStreaming, K1_CommandIdReusedAfterItFinishedIsReportedInBothModes) {
  Trace t = finished_command();
  t.add(recv(1, 1));
  EXPECT_TRUE(FirstViolation(both(client(), t), RuleId::kK1, {"command 1 received twice"}));
}

TEST(MonitorStreaming, K2_MessageIdReusedAfterItsCommandFinishedIsReportedInBothModes) {
  Trace t = finished_command();
  t.add(recv(2, 1)).add(claim(2, "m0"));
  EXPECT_TRUE(FirstViolation(both(client(), t), RuleId::kK2, {"message m0 claimed twice"}));
}

TEST(MonitorStreaming, K5_HandOffFromAFinishedCommandIsReportedInBothModes) {
  Trace t = finished_command();
  t.add(claim(1, "m1"));
  EXPECT_TRUE(FirstViolation(both(client(), t), RuleId::kK5,
                             {"command 1 hands off message m1 after its terminal transition"}));
}

TEST(MonitorStreaming, K5_E2_SecondTerminalTransitionAfterFinishIsReportedInBothModes) {
  Trace t = finished_command();
  t.add(settle(1, 1));
  const MonitorReport r = both(client(), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kK5, {"finished a second time (second terminal "
                                              "transition) and returned 1 permit"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE2, {"command 1 returned 2", "its P is 1"}));
}

TEST(MonitorStreaming, M3_E2_SecondReturnAfterFinishIsReportedInBothModes) {
  Trace t = finished_command();
  t.add(msg_return("m0"));
  const MonitorReport r = both(client(), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kM3, {"message m0 returned 1 again"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE2, {"command 1 returned 2", "its P is 1"}));
}

TEST(MonitorStreaming, K6_E2_DirectReturnFromAFinishedCommandIsReportedInBothModes) {
  Trace t = finished_command();
  t.add(DirectReturn{.cmd = n(1), .n = 1});
  const MonitorReport r = both(client(), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kK6, {"only 0 of its permits were left to return"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE2, {"command 1 returned 2"}));
}

// Random traces over a few ids, built from whole command lifecycles (so commands finish) with
// arbitrary events between them (so ids are reused after a finish, returns come twice, claims
// follow terminal transitions): streaming and whole-trace mode report the same findings.
RC_GTEST_PROP(MonitorStreaming, StreamingAndWholeTraceModesAgree, ()) {
  const auto cmd = [] { return *rc::gen::inRange<std::uint64_t>(0, 4); };
  const auto inc = [] { return *rc::gen::inRange<std::uint64_t>(0, 3); };
  const auto msg = [] { return "m" + std::to_string(*rc::gen::inRange(0, 5)); };
  const auto units = [] { return *rc::gen::inRange<std::int64_t>(-1, 4); };
  const TraceHeader h = client(*rc::gen::element<std::optional<std::int64_t>>(std::nullopt, 4),
                               2, *rc::gen::element(RulesetId::kRevD, RulesetId::kLegacy,
                                                    RulesetId::kRevB));
  Trace t;
  const int steps = *rc::gen::inRange(0, 25);
  for (int i = 0; i < steps; ++i) {
    const std::uint64_t c = cmd();
    switch (*rc::gen::inRange(0, 12)) {
      case 0:
        t.subscribed(inc(), 4, *rc::gen::element<std::string>("c1", "c2"));
        break;
      case 1: case 2: case 3: {  // a whole lifecycle: recv, hand-offs, settle, returns
        const std::int64_t p = *rc::gen::inRange<std::int64_t>(1, 4);
        t.add(Recv{.inc = n(inc()), .cmd = n(c), .message_permits = static_cast<std::uint64_t>(p)});
        std::vector<std::string> handed;
        const std::int64_t k = *rc::gen::inRange<std::int64_t>(0, p + 1);
        for (std::int64_t j = 0; j < k; ++j) {
          handed.push_back(msg());
          t.add(claim(c, handed.back()));
        }
        t.add(settle(c, p - k));
        for (const std::string& m : handed) t.add(msg_return(m));
        break;
      }
      case 4: t.add(recv(c, *rc::gen::element<std::uint64_t>(1, 2), {}, inc())); break;
      case 5: t.add(claim(c, msg())); break;
      case 6: t.add(settle(c, units())); break;
      case 7: t.add(msg_return(msg(), units())); break;
      case 8:
        t.add(DirectReturn{.cmd = n(c), .n = units(),
                           .path = *rc::gen::element<std::optional<ReturnPath>>(
                               std::nullopt, DirectPath::kCrypto, DirectPath::kChunk)});
        break;
      case 9: t.add(Restore{.cmd = n(c), .msg = s(msg())}); break;
      case 10:
        t.add(*rc::gen::arbitrary<bool>() ? Event(Drop{.msg = s(msg()), .n = 1})
                                          : Event(Drop{.cmd = n(c), .n = units()}));
        break;
      default:
        t.add(*rc::gen::arbitrary<bool>() ? Event(quiescent())
                                          : Event(IncClose{.inc = n(inc())}));
        break;
    }
  }
  const MonitorReport whole = run(h, t.events(), true);
  const MonitorReport streaming = run(h, t.events(), false);
  RC_ASSERT(SameVerdict(whole, streaming));
}

// ---- Checked arithmetic ----

TEST(MonitorArithmetic, E2_FlowOfTwoTo63Minus1AfterAFlowOf10IsAnOverGrantNotAWrap) {
  Trace t;
  t.wire_subscribed(10).add(flow(kMax64));
  EXPECT_TRUE(FirstViolation(both(wire(10, 2), t), RuleId::kE2, {"over-grant"}));
}

TEST(MonitorArithmetic, E2_E5_ClientGrantSummingPast2To63IsInventedNotAStall) {
  // Client side: the granted total of incarnation 1 saturates; a wrap would read as a stall.
  Trace t;
  t.subscribed(1, 4).add(flow(kMax64, 1)).add(quiescent());
  const MonitorReport r = both(client(), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kE2, {"Flow of 9223372036854775807"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE5, {"permits invented"}));
  EXPECT_THAT(r.violations, Not(Contains(HasRule(RuleId::kE6)))) << dump(r);
}

TEST(MonitorArithmetic, N7_E2_HugeReturnsNeverWrapTheAccumulatorOrTheCommandsTotal) {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 1)).add(claim(1, "m0")).add(settle(1, 0));
  t.add(msg_return("m0", kMax64)).add(msg_return("m0", kMax64));
  const MonitorReport r = both(client(), t);
  int n7 = 0;
  int e2 = 0;
  for (const Finding& f : r.violations) {
    n7 += f.rule == RuleId::kN7 ? 1 : 0;
    e2 += f.rule == RuleId::kE2 ? 1 : 0;
  }
  EXPECT_EQ(n7, 2) << dump(r);  // each credit overflows; the second does not wrap back
  EXPECT_EQ(e2, 2) << dump(r);  // each return takes the command past P; no wrap to negative
}

TEST(MonitorArithmetic, E5_QuiescenceWithSaturatedSumsReportsInventedPermits) {
  // The wire-derived available saturates instead of wrapping: quiescence judges a huge grant.
  Trace t;
  t.wire_subscribed(4).add(flow(kMax64)).add(flow(kMax64)).add(quiescent());
  const MonitorReport r = both(wire(4, 2), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kE2, {"over-grant"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE5, {"9223372036854775807"}));
}

// ---- N4: a Flow with no Subscribe on record ----

TEST(MonitorWire, N4_FlowWithNoSubscribeOnRecordIsReported) {
  Trace t;
  t.add(Connect{.cnx = s("c1")}).add(flow(4));
  EXPECT_TRUE(FirstViolation(both(wire(), t), RuleId::kN4,
                             {"Flow of 4 for consumer 0 on connection c1", "no Subscribe"}));
}

TEST(MonitorWire, N4_FlowOnAConnectionAfterItsDisconnectIsReported) {
  Trace t;
  t.wire_subscribed(4).add(Disconnect{.cnx = s("c1")}).add(flow(1));
  EXPECT_TRUE(FirstViolation(both(wire(), t), RuleId::kN4, {"Flow of 1"}));
}

TEST(MonitorWire, LegacyFlowWithNoSubscribeIsNotAPermitStateRule) {
  Trace t;
  t.add(Connect{.cnx = s("c1")}).add(flow(4));
  EXPECT_TRUE(Clean(both(wire(4, 2, RulesetId::kLegacy), t)));
}

// ---- Memory bounded by what is in flight ----

// One wire message of command `cmd`, acknowledged, and its unit granted back.
void acknowledged_message(Monitor& m, std::uint64_t cmd, std::uint64_t& line) {
  m.on_event(Message{.cnx = s("c1"), .consumer = 0, .cmd = n(cmd), .message_permits = 1,
                     .batch_size = 1},
             line++);
  m.on_event(Ack{.cnx = s("c1"), .consumer = 0, .cmd = n(cmd)}, line++);
  m.on_event(flow(1), line++);
}

Monitor wire_monitor(std::uint64_t& line) {
  Monitor m(wire(1000, 10), MonitorOptions{.retain_ledger = false});
  Trace t;
  t.wire_subscribed(1000);
  for (const Event& e : t.events()) m.on_event(e, line++);
  return m;
}

TEST(MonitorMemory, AcknowledgedWireCommandsAreReleased) {
  std::uint64_t line = 2;
  Monitor m = wire_monitor(line);
  m.on_event(Message{.cnx = s("c1"), .consumer = 0, .cmd = n(1), .message_permits = 1,
                     .batch_size = 1},
             line++);
  EXPECT_EQ(m.size().commands, 1u);
  m.on_event(Ack{.cnx = s("c1"), .consumer = 0, .cmd = n(1)}, line++);
  EXPECT_EQ(m.size().commands, 0u);
  for (std::uint64_t i = 2; i < 10'000; ++i) acknowledged_message(m, i, line);
  const MonitorSize size = m.size();
  EXPECT_EQ(size.commands, 0u);
  EXPECT_EQ(size.finished_commands, 0u);
  EXPECT_LT(size.bytes, std::size_t{64} << 10) << "largest part: " << size.largest();
  EXPECT_THAT(m.violations(), IsEmpty()) << dump(m.violations());
}

TEST(MonitorMemory, WireCommandsInFlightAreReleasedWhenTheirConnectionEnds) {
  std::uint64_t line = 2;
  Monitor m = wire_monitor(line);
  for (std::uint64_t i = 0; i < 100; ++i) {
    m.on_event(Message{.cnx = s("c1"), .consumer = 0, .cmd = n(i), .message_permits = 1,
                       .batch_size = 1},
               line++);
  }
  EXPECT_EQ(m.size().commands, 100u);
  EXPECT_EQ(m.size().wire_consumers, 1u);
  m.on_event(Disconnect{.cnx = s("c1")}, line++);
  EXPECT_EQ(m.size().commands, 0u);
  EXPECT_EQ(m.size().wire_consumers, 0u);
  EXPECT_EQ(m.size().connections, 0u);
}

TEST(MonitorMemory, SizeNamesTheLargestPart) {
  std::uint64_t line = 2;
  Monitor m = wire_monitor(line);
  for (std::uint64_t i = 0; i < 1000; ++i) {
    m.on_event(Message{.cnx = s("c1"), .consumer = 0, .cmd = n(i), .message_permits = 1,
                       .batch_size = 1},
               line++);
  }
  const MonitorSize size = m.size();
  EXPECT_EQ(size.largest(), "commands in flight");
  EXPECT_GT(size.bytes, 1000 * sizeof(std::uint64_t));
}

// 1 million acknowledged wire messages, Flows keeping up, validated in a child process whose
// heap is limited to 64 MiB (setrlimit RLIMIT_DATA): it finishes clean instead of bad_alloc.
TEST(MonitorMemory, MillionAcknowledgedWireMessagesFitIn64MiB) {
#if PERMITCHECK_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer reserves far more than 64 MiB of address space and keeps "
                  "freed memory in quarantine: the limit is checked in the plain build";
#endif
  const int code = child_testing::run_under_heap_limit(64, [] {
    std::uint64_t line = 2;
    Monitor m = wire_monitor(line);
    for (std::uint64_t i = 0; i < 1'000'000; ++i) acknowledged_message(m, i, line);
    m.on_event(quiescent(), line++);
    m.finish();
    return m.violations().empty() ? 0 : 1;
  });
  EXPECT_EQ(code, 0) << child_testing::explain_exit("1 violations");
}

// ---- Branches pinned by `ci/mutate --mode monitor` ----

TEST(MonitorMemory, SizeCountsHandedOffMessagesAndEachPartsBytes) {
  Monitor m(client(4, 2));
  Trace t;
  t.wire_subscribed(4).subscribed(1, 4).add(recv(1, 1)).add(claim(1, "m1"));
  std::uint64_t line = 2;
  for (const Event& e : t.events()) m.on_event(e, line++);
  const MonitorSize size = m.size();
  EXPECT_EQ(size.messages, 1u);
  EXPECT_EQ(size.wire_consumers, 1u);
  EXPECT_GT(size.part_bytes[4], 0u) << "wire consumers";
  EXPECT_GT(size.part_bytes[5], 0u) << "connections";
  std::size_t sum = 0;
  for (std::size_t b : size.part_bytes) sum += b;
  EXPECT_EQ(size.bytes, sum);
}

}  // namespace
}  // namespace permitcheck::spec
