// The Monitor on unknown references and arbitrary event sequences: violations, never crashes.
#include "spec/monitor.h"

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
// Robustness: unknown references are violations, never crashes.
// ======================================================================================

TEST(MonitorRobustness, K2_K4_K5_K6_C1_C3_C7_S1_M1_N1_N3_UnknownReferencesAreViolations) {
  struct Case {
    Event event;
    RuleId rule;
  };
  const std::vector<Case> cases = {
      {flow(4, 9), RuleId::kN1},
      {IncFlowEnabled{.inc = n(9)}, RuleId::kN1},
      {IncClose{.inc = n(9)}, RuleId::kN1},
      {recv(9, 1, {}, 9), RuleId::kN1},
      {Resolve{.cmd = n(9), .p = 1}, RuleId::kC1},
      {Metadata{.cmd = n(9), .batch_size = 1}, RuleId::kC3},
      {Corrupt{.cmd = n(9)}, RuleId::kC7},
      {claim(9, "m9"), RuleId::kK2},
      {Restore{.cmd = n(9), .msg = s("m9")}, RuleId::kK2},
      {Skip{.cmd = n(9), .index = 0}, RuleId::kK4},
      {Transfer{.cmd = n(9)}, RuleId::kS1},
      {DirectReturn{.cmd = n(9), .n = 1}, RuleId::kK6},
      {settle(9, 1), RuleId::kK5},
      {msg_return("m9"), RuleId::kM1},
      {Drop{.msg = s("m9"), .n = 1}, RuleId::kM1},
      {Drop{.cmd = n(9), .n = 1}, RuleId::kN3},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(event_name(c.event));
    Trace t;
    t.subscribed(1, 4).add(c.event);
    const MonitorReport r = check(client(), t);
    EXPECT_TRUE(FirstViolation(r, c.rule, {"9"}));
  }
}

TEST(MonitorRobustness, C7_CorruptOfACommandOnlySeenOnTheWireIsAViolation) {
  // The client never received command 1 (no recv), so it cannot have found its payload corrupt.
  Trace t;
  t.wire_subscribed(std::nullopt).subscribed(1, 4).add(message(1, 1)).add(
      Corrupt{.cmd = n(1), .stage = FailureStage::kChecksum});
  const MonitorReport r = check(model(4, 2), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kC7, {"command 1"}));
}

TEST(MonitorRobustness, ExtensionsAndUnrelatedEventsAreIgnored) {
  Trace t;
  t.add(Extension{.ev = "x-note"})
      .add(Ack{.cnx = s("c1"), .consumer = 0, .cmd = n(1)})
      .add(Disconnect{.cnx = s("nowhere")})
      .add(Quiescent{.cnx = s("nowhere"), .consumer = 7})
      .add(ProtocolError{.cnx = s("nowhere"), .reason = "x"})
      .add(CloseConsumer{.cnx = s("nowhere"), .consumer = 7})
      .add(ConsumerRemoved{.consumer = 7})
      .add(Drop{.n = 3});
  const MonitorReport r = check(model(4, 2), t);
  EXPECT_TRUE(Clean(r));
  EXPECT_THAT(r.deviations, IsEmpty());
}

// Any sequence of events over a handful of identifiers: the monitor reports, never crashes, and
// every finding carries the line of an event it was given.
RC_GTEST_PROP(MonitorRobustness, ArbitraryEventSequencesNeverCrash, ()) {
  const auto id = [] { return Id::number(*rc::gen::inRange<std::uint64_t>(0, 3)); };
  const auto msg = [] { return Id::text("m" + std::to_string(*rc::gen::inRange(0, 3))); };
  const auto cnx = [] { return Id::text("c" + std::to_string(*rc::gen::inRange(0, 2))); };
  const auto small = [] { return *rc::gen::inRange<std::int64_t>(-2, 12); };
  const auto ack = [] {
    return *rc::gen::element(AckSet(), AckSet({37}), AckSet({0}), AckSet::from_indexes({9}));
  };
  const auto mp = []() -> std::optional<std::uint64_t> {
    return *rc::gen::element<std::optional<std::uint64_t>>(std::nullopt, 0, 1, 3, 8, kTwoTo31);
  };
  const TraceHeader h{.source = TraceSource::kModel,
                      .ruleset = *rc::gen::element(RulesetId::kRevD, RulesetId::kLegacy),
                      .q = *rc::gen::element<std::optional<std::int64_t>>(std::nullopt, 0, 4),
                      .t = *rc::gen::element<std::optional<std::int64_t>>(std::nullopt, 2)};
  const int count = *rc::gen::inRange(0, 60);
  std::vector<Event> events;
  for (int i = 0; i < count; ++i) {
    switch (*rc::gen::inRange(0, 27)) {
      case 0: events.push_back(Connect{.cnx = cnx()}); break;
      case 1: events.push_back(Subscribe{.cnx = cnx(), .consumer = 0}); break;
      case 2: events.push_back(SubscribeOk{.cnx = cnx(), .consumer = 0}); break;
      case 3: events.push_back(Flow{.cnx = cnx(), .permits = small(), .inc = id()}); break;
      case 4: events.push_back(Flow{.cnx = cnx(), .permits = small()}); break;
      case 5:
        events.push_back(Message{.cnx = cnx(), .cmd = id(), .message_permits = mp(),
                                 .ack_set = ack(), .batch_size = small()});
        break;
      case 6: events.push_back(CloseConsumer{.cnx = cnx()}); break;
      case 7: events.push_back(Disconnect{.cnx = cnx()}); break;
      case 8: events.push_back(Quiescent{.cnx = cnx()}); break;
      case 9: events.push_back(IncOpen{.inc = id(), .cnx = cnx()}); break;
      case 10: events.push_back(IncFlowEnabled{.inc = id()}); break;
      case 11: events.push_back(IncClose{.inc = id()}); break;
      case 12:
        events.push_back(Recv{.inc = id(), .cmd = id(), .message_permits = mp(), .ack_set = ack()});
        break;
      case 13: events.push_back(Resolve{.cmd = id(), .p = small()}); break;
      case 14: events.push_back(Metadata{.cmd = id(), .batch_size = small()}); break;
      case 15:
        events.push_back(Corrupt{.cmd = id(),
                                 .stage = *rc::gen::element(FailureStage::kChecksum,
                                                            FailureStage::kDecompress,
                                                            FailureStage::kInconsistent)});
        break;
      case 16: events.push_back(Claim{.cmd = id(), .msg = msg(), .index = small()}); break;
      case 17: events.push_back(Restore{.cmd = id(), .msg = msg()}); break;
      case 18: events.push_back(Skip{.cmd = id(), .index = small()}); break;
      case 19:
        events.push_back(Transfer{.cmd = id(), .path = *rc::gen::element(TransferPath::kChunk,
                                                                       TransferPath::kCrypto,
                                                                       TransferPath::kProcessor)});
        break;
      case 20:
        events.push_back(DirectReturn{
            .cmd = id(), .n = small(),
            .path = *rc::gen::element<std::optional<std::string>>(std::nullopt, "crypto", "chunk",
                                                                  "duplicate")});
        break;
      case 21: events.push_back(Settle{.cmd = id(), .n = small()}); break;
      case 22: events.push_back(MsgReturn{.msg = msg(), .n = small()}); break;
      case 23:
        events.push_back(*rc::gen::arbitrary<bool>() ? Event(Drop{.msg = msg(), .n = small()})
                                                     : Event(Drop{.cmd = id(), .n = small()}));
        break;
      case 24: events.push_back(ProtocolError{.cnx = cnx(), .reason = "r"}); break;
      case 25: events.push_back(Ack{.cnx = cnx(), .consumer = 0, .cmd = id()}); break;
      default:
        events.push_back(Send{.consumer = 0,
                              .dispatcher = *rc::gen::element(DispatcherKind::kPersistentShared,
                                                              DispatcherKind::kSingleActive),
                              .entries = {entry(id().as_number(), small(), true, small())},
                              .consumer_debit = small(),
                              .dispatcher_debit = small()});
        break;
    }
  }
  const bool retain = *rc::gen::arbitrary<bool>();
  Monitor m(h, MonitorOptions{.retain_ledger = retain});
  Monitor other(h, MonitorOptions{.retain_ledger = !retain});
  for (std::size_t i = 0; i < events.size(); ++i) {
    m.on_event(events[i], 100 + i);
    other.on_event(events[i], 100 + i);
  }
  m.finish();
  other.finish();
  // One verdict: streaming and whole-trace mode report the same findings (issue 18).
  RC_ASSERT(m.violations().size() == other.violations().size());
  for (std::size_t i = 0; i < m.violations().size(); ++i) {
    RC_ASSERT(m.violations()[i].rule == other.violations()[i].rule);
    RC_ASSERT(m.violations()[i].line == other.violations()[i].line);
    RC_ASSERT(m.violations()[i].explanation == other.violations()[i].explanation);
  }
  RC_ASSERT(m.deviations().size() == other.deviations().size());
  for (const Finding& f : m.violations()) {
    RC_ASSERT(f.line >= 100u);
    RC_ASSERT(f.line < 100u + events.size());
    RC_ASSERT(!f.explanation.empty());
  }
  for (const Finding& f : m.deviations()) RC_ASSERT(rule_info(f.rule).known_deviation);
  for (const Finding& f : m.violations()) RC_ASSERT(!rule_info(f.rule).known_deviation);
}

}  // namespace
}  // namespace permitcheck::spec
