// The Monitor (spec/monitor.h), check by check: for every rule monitor.cc reports, a small
// event sequence that breaks it (asserting the rule ID of the first violation and the numbers in
// its explanation) and the same sequence done right (no violation). Known deviations X1-X6 are
// asserted among deviations() and never among violations().
#include "spec/monitor.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidcheck.h"
#include "rapidcheck/gtest.h"
#include "spec/finalize.h"

namespace permitcheck::spec {
namespace {

using ::testing::Contains;
using ::testing::Each;
using ::testing::Field;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

constexpr std::uint64_t kTwoTo31 = std::uint64_t{1} << 31;
constexpr std::uint64_t kTwoTo32Minus1 = (std::uint64_t{1} << 32) - 1;

Id n(std::uint64_t v) { return Id::number(v); }
Id s(std::string v) { return Id::text(std::move(v)); }

TraceHeader header(TraceSource source, std::optional<std::int64_t> q, std::optional<std::int64_t> t,
                   RulesetId rules = RulesetId::kRevD) {
  return TraceHeader{.source = source, .ruleset = rules, .q = q, .t = t};
}
TraceHeader client(std::optional<std::int64_t> q = 4, std::optional<std::int64_t> t = 2,
                   RulesetId rules = RulesetId::kRevD) {
  return header(TraceSource::kClient, q, t, rules);
}
TraceHeader wire(std::optional<std::int64_t> q = 4, std::optional<std::int64_t> t = 2,
                 RulesetId rules = RulesetId::kRevD) {
  return header(TraceSource::kWire, q, t, rules);
}
TraceHeader model(std::optional<std::int64_t> q, std::optional<std::int64_t> t,
                  RulesetId rules = RulesetId::kRevD) {
  return header(TraceSource::kModel, q, t, rules);
}
TraceHeader broker(RulesetId rules = RulesetId::kRevD) {
  return header(TraceSource::kBroker, std::nullopt, std::nullopt, rules);
}

// A trace under construction.
class Trace {
 public:
  Trace& add(Event e) {
    events_.push_back(std::move(e));
    return *this;
  }
  // Client accounting: permit state `inc` opened on (cnx, consumer), Flow-enabled, initial grant q.
  Trace& subscribed(std::uint64_t inc, std::int64_t q, std::string cnx = "c1",
                    std::uint64_t consumer = 0) {
    add(IncOpen{.inc = n(inc), .cnx = s(cnx), .consumer = consumer});
    add(IncFlowEnabled{.inc = n(inc)});
    return add(Flow{.cnx = s(std::move(cnx)), .consumer = consumer, .permits = q, .inc = n(inc)});
  }
  // Wire: connect, subscribe, subscribe_ok and (if given) the first Flow.
  Trace& wire_subscribed(std::optional<std::int64_t> first_flow, std::string cnx = "c1",
                         std::uint64_t consumer = 0) {
    add(Connect{.cnx = s(cnx)});
    add(Subscribe{.cnx = s(cnx), .consumer = consumer});
    add(SubscribeOk{.cnx = s(cnx), .consumer = consumer});
    if (first_flow) add(Flow{.cnx = s(cnx), .consumer = consumer, .permits = *first_flow});
    return *this;
  }
  const std::vector<Event>& events() const { return events_; }

 private:
  std::vector<Event> events_;
};

Message message(std::uint64_t cmd, std::optional<std::uint64_t> mp, AckSet ack = {},
                std::optional<std::int64_t> batch_size = std::nullopt, std::string cnx = "c1") {
  return Message{.cnx = s(std::move(cnx)),
                 .consumer = 0,
                 .cmd = n(cmd),
                 .message_permits = mp,
                 .ack_set = std::move(ack),
                 .batch_size = batch_size};
}
Recv recv(std::uint64_t cmd, std::optional<std::uint64_t> mp, AckSet ack = {},
          std::uint64_t inc = 1) {
  return Recv{.inc = n(inc), .cmd = n(cmd), .message_permits = mp, .ack_set = std::move(ack)};
}
Claim claim(std::uint64_t cmd, std::string msg, std::optional<std::int64_t> index = std::nullopt) {
  return Claim{.cmd = n(cmd), .msg = s(std::move(msg)), .index = index};
}
Settle settle(std::uint64_t cmd, std::int64_t units) { return Settle{.cmd = n(cmd), .n = units}; }
MsgReturn msg_return(std::string msg, std::int64_t units = 1) {
  return MsgReturn{.msg = s(std::move(msg)), .n = units};
}
Flow flow(std::int64_t permits, std::optional<std::uint64_t> inc = std::nullopt,
          std::string cnx = "c1") {
  return Flow{.cnx = s(std::move(cnx)),
              .consumer = 0,
              .permits = permits,
              .inc = inc ? std::optional<Id>(n(*inc)) : std::nullopt};
}
Quiescent quiescent(std::string cnx = "c1") { return Quiescent{.cnx = s(std::move(cnx))}; }
SentEntry entry(std::uint64_t cmd, std::int64_t batch_size, bool admitted,
                std::optional<std::int64_t> p, AckSet ack = {}) {
  return SentEntry{.cmd = n(cmd),
                   .entry = SendEntry{.batch_size = batch_size, .ack_set = std::move(ack),
                                      .admitted = admitted},
                   .p = p};
}

MonitorReport check(const TraceHeader& h, const Trace& t) { return check_trace(h, t.events()); }

std::string dump(const std::vector<Finding>& findings) {
  std::string out;
  for (const Finding& f : findings) out += format_finding(f) + "\n";
  return out.empty() ? "(none)\n" : out;
}
std::string dump(const MonitorReport& r) {
  return "violations:\n" + dump(r.violations) + "deviations:\n" + dump(r.deviations);
}

bool contains_all(const std::string& text, std::initializer_list<std::string_view> parts) {
  for (std::string_view p : parts) {
    if (text.find(p) == std::string::npos) return false;
  }
  return true;
}

// The first violation is `rule` and its explanation contains every one of `parts`.
::testing::AssertionResult FirstViolation(const MonitorReport& r, RuleId rule,
                                          std::initializer_list<std::string_view> parts) {
  if (r.violations.empty()) {
    return ::testing::AssertionFailure() << "no violation; expected " << rule_name(rule) << "\n"
                                         << dump(r);
  }
  const Finding& f = r.violations.front();
  if (f.rule != rule || !contains_all(f.explanation, parts)) {
    ::testing::AssertionResult out = ::testing::AssertionFailure();
    out << "expected first violation " << rule_name(rule) << " mentioning";
    for (std::string_view p : parts) out << " [" << p << "]";
    return out << "\n" << dump(r);
  }
  return ::testing::AssertionSuccess();
}

// Some finding of `findings` is `rule` and mentions every one of `parts`.
::testing::AssertionResult Reports(const std::vector<Finding>& findings, RuleId rule,
                                   std::initializer_list<std::string_view> parts) {
  for (const Finding& f : findings) {
    if (f.rule == rule && contains_all(f.explanation, parts)) {
      return ::testing::AssertionSuccess();
    }
  }
  ::testing::AssertionResult out = ::testing::AssertionFailure();
  out << "no " << rule_name(rule) << " mentioning";
  for (std::string_view p : parts) out << " [" << p << "]";
  return out << " among:\n" << dump(findings);
}

::testing::AssertionResult Clean(const MonitorReport& r) {
  if (r.violations.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "unexpected violations\n" << dump(r);
}

auto HasRule(RuleId rule) { return Field(&Finding::rule, rule); }

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
            "line 6: K5 command 7 terminal transition returned 2 but 3 unit(s) are "
            "command-owned (P = 3, 0 handed off, 0 skipped, 0 returned directly); 1 permit(s) "
            "lost");
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

TEST(MonitorOutput, N4_CheckTraceNumbersEventIOnLineIPlusTwo) {
  Trace t;
  t.add(Connect{.cnx = s("c1")})
      .add(Subscribe{.cnx = s("c1"), .consumer = 0})
      .add(flow(4));  // third event: line 4
  const MonitorReport r = check(wire(), t);
  ASSERT_THAT(r.violations, SizeIs(1)) << dump(r);
  EXPECT_EQ(r.violations.front().line, 4u);
}

TEST(MonitorOutput, K2_K5_LedgerShowsTheCommandAccounting) {
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

TEST(MonitorWire, W2_ValuesOneToTwoTo31MinusOneAreValid) {
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

TEST(MonitorWire, W3_LegacyBrokerPromisesNoField) {
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
                             {"command 1 serialized message_permits = 4", "B = 8",
                              "give P = 3"}));
  Trace good;
  good.wire_subscribed(4).add(message(1, 3, ack, 8));
  EXPECT_TRUE(Clean(check(wire(), good)));
}

TEST(MonitorWire, B2_B7_CompleteBatchAndNonBatchedCarryBAndOne) {
  Trace bad;
  bad.wire_subscribed(16).add(message(1, 1, {}, 8));  // complete batch of 8 serialized as 1
  EXPECT_TRUE(FirstViolation(check(wire(16, 8), bad), RuleId::kB7,
                             {"message_permits = 1", "B = 8", "give P = 8"}));
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
  // After a refused Subscribe, or after the broker closed the consumer, no Flow either.
  Trace refused;
  refused.add(Subscribe{.cnx = s("c1"), .consumer = 0})
      .add(SubscribeFail{.cnx = s("c1"), .consumer = 0})
      .add(flow(4));
  EXPECT_TRUE(FirstViolation(check(wire(), refused), RuleId::kN4, {"Flow of 4"}));
  Trace closed;
  closed.wire_subscribed(4).add(CloseConsumer{.cnx = s("c1"), .consumer = 0}).add(flow(1));
  EXPECT_TRUE(FirstViolation(check(wire(), closed), RuleId::kN4, {"Flow of 1"}));
}

TEST(MonitorWire, N4_FlowAfterSubscribeOkIsFine) {
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

TEST(MonitorWire, E2_FlowReturningWhatWasDebitedIsFine) {
  Trace t;
  t.wire_subscribed(4).add(message(1, 3)).add(flow(2)).add(message(2, 1)).add(flow(2));
  EXPECT_TRUE(Clean(check(wire(), t)));
}

TEST(MonitorWire, E2_LegacyDoesNotPromiseTheBound) {
  Trace t;
  t.wire_subscribed(4).add(message(1, 1)).add(flow(2));
  EXPECT_TRUE(Clean(check(wire(4, 2, RulesetId::kLegacy), t)));
}

TEST(MonitorWire, E5_QuiescentWithTheAccumulatorAtTIsReported) {
  Trace t;
  t.wire_subscribed(4).add(message(1, 3)).add(quiescent());
  EXPECT_TRUE(FirstViolation(check(wire(4, 2), t), RuleId::kE5,
                             {"consumer 0 on connection c1 at quiescence", "broker available 1",
                              "Q = 4", "leaves 3 permit(s) unreturned", "not below T = 2"}));
}

TEST(MonitorWire, E5_QuiescentWithTheAccumulatorBelowTIsFine) {
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

TEST(MonitorWire, E5_E6_LegacyDoesNotPromiseConservation) {
  Trace t;
  t.wire_subscribed(4).add(message(1, std::nullopt, {}, 4)).add(quiescent());
  EXPECT_TRUE(Clean(check(wire(4, 2, RulesetId::kLegacy), t)));
}

TEST(MonitorWire, B9_BatchDebtIsSignedAndNeverClamped) {
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

TEST(MonitorClient, C1_C2_LadderFollowedIsFine) {
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

TEST(MonitorClient, C3_C5_FailedValidationSettlesWithoutHandOff) {
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
                               {value, "settles 1 permit(s)", "no credit"}));
    Trace direct;
    direct.subscribed(1, 4).add(recv(1, bad)).add(DirectReturn{.cmd = n(1), .n = 1});
    EXPECT_TRUE(FirstViolation(check(client(), direct), RuleId::kC4,
                               {value, "returns 1 permit(s)"}));
    Trace corrupt;
    corrupt.subscribed(1, 4)
        .add(recv(1, bad))
        .add(Corrupt{.cmd = n(1), .stage = FailureStage::kChecksum});
    EXPECT_TRUE(FirstViolation(check(client(), corrupt), RuleId::kC4,
                               {value, "treated as corrupted data"}));
  }
}

TEST(MonitorClient, C4_ProtocolErrorIsTheCorrectOutcome) {
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

TEST(MonitorClient, C4_LegacyClientDoesNotReadTheField) {
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
  const MonitorReport at_end = check(client(), t);
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
                             {"command 1 terminal transition returned 1 but 3 unit(s)",
                              "failed at inconsistent", "2 permit(s) lost"}));
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

TEST(MonitorClient, C5_C6_FieldAbsentInconsistentSettlesTheEarlyValue) {
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
                               {"returned 1 but 100 unit(s)", stage, "99 permit(s) lost"}));
    Trace good;
    good.subscribed(1, 1000).add(recv(1, 100));
    if (c.metadata) good.add(Metadata{.cmd = n(1), .batch_size = 100});
    good.add(Corrupt{.cmd = n(1), .stage = c.stage}).add(settle(1, 100));
    EXPECT_TRUE(Clean(check(client(1000, 500), good)));
  }
}

TEST(MonitorClient, C7_ExplicitValueSettlesWhenMetadataIsUnreadable) {
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

TEST(MonitorClient, K1_K5_CommandOwnsAllPUntilItsTerminalTransition) {
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

TEST(MonitorClient, K2_FailedHandOffRestoresItsUnit) {
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
                             {"returned 0 but 1 unit(s)", "1 handed off"}));
}

TEST(MonitorClient, K2_K5_RestoreAfterTheTerminalTransitionIsReported) {
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

TEST(MonitorClient, K3_ClearedIndexesNeverTouchTheBudget) {
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
                             {"returned 0 but 1 unit(s)", "1 skipped", "1 permit(s) lost"}));
}

TEST(MonitorClient, K4_SkippedUnitStaysCommandOwned) {
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
                             {"command 1 second terminal transition returned 1",
                              "any later terminal transition returns 0"}));
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
                             {"command 1 has no terminal transition at quiescence",
                              "3 unit(s) still command-owned"}));
}

TEST(MonitorClient, K5_SettlingLessThanOwnedWithoutFailureIsReported) {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 3)).add(claim(1, "m0")).add(settle(1, 1));
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kK5,
                             {"returned 1 but 2 unit(s)", "1 permit(s) lost"}));
}

TEST(MonitorClient, K6_DirectReturnBeyondBudgetIsDoubleReturn) {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 1))
      .add(claim(1, "m0", 0))
      .add(DirectReturn{.cmd = n(1), .n = 1, .path = "duplicate"});
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kK6,
                             {"command 1 returns 1 unit(s) directly (duplicate)",
                              "only 0 are command-owned", "returned twice"}));
  Trace negative;
  negative.subscribed(1, 4).add(recv(1, 1)).add(DirectReturn{.cmd = n(1), .n = -1});
  EXPECT_TRUE(FirstViolation(check(client(), negative), RuleId::kK6,
                             {"command 1 returns -1 units directly"}));
  Trace after_settle;
  after_settle.subscribed(1, 4)
      .add(recv(1, 1))
      .add(settle(1, 1))
      .add(DirectReturn{.cmd = n(1), .n = 1, .path = "dead_letter"});
  EXPECT_TRUE(FirstViolation(check(client(), after_settle), RuleId::kK6,
                             {"(dead_letter) but only 0 are command-owned"}));
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

TEST(MonitorClient, K6_K7_DirectReturnBesideTheBudgetReturnsTwice) {
  // Revision B's F1: the legacy direct return stays and the budget drains as well.
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 1))
      .add(Skip{.cmd = n(1), .index = 0, .reason = SkipReason::kDuplicate})
      .add(DirectReturn{.cmd = n(1), .n = 1, .path = "duplicate"})
      .add(settle(1, 1));
  const MonitorReport r = check(client(), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kK7, {"returned 1 but 0 unit(s)", "returns 2 > P"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE2, {"returned 2 permits but its P is 1"}));
}

TEST(MonitorClient, K7_E2_SettlingMoreThanOwnedOverReturns) {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 3)).add(claim(1, "m0")).add(settle(1, 3));
  const MonitorReport r = check(client(), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kK7,
                             {"command 1 terminal transition returned 3 but 2 unit(s)",
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

TEST(MonitorClient, S1_TransferredCommandSettlesNothing) {
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

TEST(MonitorClient, S1_K5_SettleAfterTransferReturnsNothing) {
  // After the transfer the generic budget owns nothing: its terminal transition returns 0.
  Trace t;
  t.subscribed(1, 16)
      .add(recv(1, 8))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(Transfer{.cmd = n(1), .path = TransferPath::kCrypto})
      .add(settle(1, 8));
  EXPECT_TRUE(FirstViolation(check(client(16, 8), t), RuleId::kK5,
                             {"command 1 terminal transition returned 8 but 0 unit(s)"}));
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

TEST(MonitorClient, S2_NonFinalChunkReturnsOne) {
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

TEST(MonitorClient, S3_CryptoDiscardOfACompleteBatchReturnsB) {
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

// Crypto FAIL: the command is transferred and returns nothing; held for redelivery (S4, X3).
Trace crypto_fail() {
  Trace t;
  t.subscribed(1, 16)
      .add(recv(1, 8))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(Transfer{.cmd = n(1), .path = TransferPath::kCrypto})
      .add(settle(1, 0));
  return t;
}

TEST(MonitorClient, S4_X3_CryptoFailHoldingPToTheEndOfTheTraceIsADeviation) {
  const MonitorReport r = check(client(16, 8), crypto_fail());
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r);
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX3,
                      {"command 1 (crypto FAIL) holds P = 8 until its incarnation ends"}));
}

TEST(MonitorClient, S4_X3_CryptoFailHeldUntilIncCloseIsADeviation) {
  Trace t = crypto_fail();
  t.add(CloseConsumer{.cnx = s("c1"), .consumer = 0})
      .add(IncClose{.inc = n(1), .reason = CloseReason::kCloseConsumer});
  const MonitorReport r = check(client(16, 8), t);
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r);
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX3,
                      {"command 1 (crypto FAIL) holds P = 8 until its incarnation ends"}));
}

TEST(MonitorClient, S4_X3_CryptoFailHeldWithoutRetainedLedgerIsADeviation) {
  Monitor m(client(16, 8), MonitorOptions{.retain_ledger = false});
  const Trace t = crypto_fail();
  for (std::size_t i = 0; i < t.events().size(); ++i) m.on_event(t.events()[i], i + 2);
  m.finish();
  EXPECT_THAT(m.violations(), IsEmpty()) << dump(m.violations());
  EXPECT_TRUE(Reports(m.deviations(), RuleId::kX3, {"holds P = 8"}));
}

TEST(MonitorClient, S4_X3_E5_CryptoFailHeldAtQuiescenceIsADeviationNotAViolation) {
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
                             {"returned 0 but 2 unit(s)", "2 skipped", "2 permit(s) lost"}));
}

TEST(MonitorClient, S5_K6_K7_DeadLetterNonBatchedReturnedDirectlyAndSettledIsDouble) {
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

TEST(MonitorClient, S7_ZeroQueueClosingTheConsumerIsFine) {
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
                              "a claimed unit returns exactly 1"}));
}

TEST(MonitorClient, M1_DropWhileTheIncarnationIsCurrentIsReported) {
  Trace t = handed_off();
  t.add(Drop{.msg = s("m0"), .n = 1});
  EXPECT_TRUE(FirstViolation(check(client(), t), RuleId::kM1,
                             {"message m0 dropped 1 unit(s) while incarnation 1 is current",
                              "lost"}));
  Trace cmd;
  cmd.subscribed(1, 4).add(recv(1, 3)).add(Drop{.cmd = n(1), .n = 3});
  EXPECT_TRUE(FirstViolation(check(client(), cmd), RuleId::kM1,
                             {"command 1 dropped 3 unit(s) while incarnation 1 is current"}));
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
                             {"1 message(s) of command 1 never returned their unit"}));
}

TEST(MonitorClient, M1_ReturnedOnceWhileCurrentIsFine) {
  Trace t = handed_off();
  t.add(msg_return("m0")).add(quiescent());
  EXPECT_TRUE(Clean(check(client(), t)));
}

TEST(MonitorClient, M2_N3_StaleEpochDiscardReturnsThroughTheRetainedState) {
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

TEST(MonitorClient, M3_SecondReturnOfZeroIsANoOp) {
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

TEST(MonitorClient, N1_N2_OneStatePerIncarnationIsFine) {
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

TEST(MonitorClient, N2_ReplacementStartsWithQAndTheOldCreditIsDropped) {
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
                             {"return of message m0 of command 1 credits 1 permit(s) to "
                              "incarnation 1, which has ended (must be dropped)"}));
  Trace drop_unknown;
  drop_unknown.add(Drop{.cmd = n(9), .n = 1});
  EXPECT_TRUE(FirstViolation(check(client(), drop_unknown), RuleId::kN3,
                             {"drop of command 9, which was never received"}));
}

TEST(MonitorClient, N3_DroppingTheReturnOfAnEndedIncarnationIsFine) {
  Trace t = handed_off();
  t.add(IncClose{.inc = n(1), .reason = CloseReason::kClosed}).add(Drop{.msg = s("m0"), .n = 1});
  EXPECT_TRUE(Clean(check(client(), t)));
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

TEST(MonitorClient, N5_FlowAtTheThresholdWhileCurrentIsFine) {
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

TEST(MonitorClient, N6_OldFlowWrittenBeforeTheReplacementIsFine) {
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

TEST(MonitorClient, N5_N6_LegacyWritesTheOldFlowAnyway) {
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

TEST(MonitorClient, N7_OverflowClosesTheConnectionInsteadOfCrediting) {
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
  EXPECT_TRUE(FirstViolation(r, RuleId::kC7, {"99 permit(s) lost"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE1,
                      {"command 1 finished having returned 1 of its P = 100",
                       "99 permit(s) lost"}));
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
                             {"return of message m0 of command 1 credits 1 permit(s) debited to "
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

TEST(MonitorClient, E3_LegacyCreditsTheCurrentConsumer) {
  Trace t = handed_off();
  t.add(CloseConsumer{.cnx = s("c1"), .consumer = 0})
      .add(IncClose{.inc = n(1), .reason = CloseReason::kCloseConsumer})
      .subscribed(2, 4)
      .add(msg_return("m0"));
  EXPECT_TRUE(Clean(check(client(4, 2, RulesetId::kLegacy), t)));
}

TEST(MonitorClient, E5_QuiescenceConservesQ) {
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
  EXPECT_TRUE(FirstViolation(r, RuleId::kK5, {"1 permit(s) lost"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE5,
                      {"consumer 0 on connection c1 at quiescence", "broker available 1",
                       "accumulator 2 = 3", "expected Q = 4", "1 permit(s) lost"}));
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
                              "1 permit(s) invented"}));
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
  EXPECT_TRUE(FirstViolation(r, RuleId::kM1, {"2 message(s) of command 1"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE6,
                      {"consumer 0 on connection c1 is quiescent with broker available 0"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE5, {"2 permit(s) lost"}));
}

// ======================================================================================
// Broker accounting: B1-B11, E4.
// ======================================================================================

TEST(MonitorBroker, B1_RejectedEntryFinalizedIsReported) {
  Trace t;
  t.add(Send{.consumer = 0,
             .entries = {entry(1, 10, true, 10), entry(2, 10, false, 10)},
             .consumer_debit = 10});
  EXPECT_TRUE(FirstViolation(check(broker(), t), RuleId::kB1,
                             {"rejected entry 2 was finalized with P = 10"}));
}

TEST(MonitorBroker, B1_B4_RejectedEntryMakesNoCommandAndNoDebit) {
  Trace t;
  t.add(Send{.consumer = 0,
             .entries = {entry(1, 10, true, 10), entry(2, 10, false, std::nullopt)},
             .consumer_debit = 10});
  EXPECT_TRUE(Clean(check(broker(), t)));
}

TEST(MonitorBroker, B2_FinalizedPOtherThanTheCandidateIsReported) {
  Trace t;
  t.add(Send{.consumer = 0, .entries = {entry(1, 8, true, 8, AckSet({37}))}, .consumer_debit = 3});
  EXPECT_TRUE(FirstViolation(check(broker(), t), RuleId::kB2,
                             {"entry 1 finalized P = 8 but B = 8", "give 3"}));
  Trace good;
  good.add(
      Send{.consumer = 0, .entries = {entry(1, 8, true, 3, AckSet({37}))}, .consumer_debit = 3});
  EXPECT_TRUE(Clean(check(broker(), good)));
}

TEST(MonitorBroker, B3_EntryWithNothingToDeliverFinalizedIsReported) {
  Trace t;
  t.add(Send{.consumer = 0, .entries = {entry(1, 8, true, 1, AckSet({0}))}, .consumer_debit = 0});
  EXPECT_TRUE(FirstViolation(check(broker(), t), RuleId::kB3,
                             {"entry 1 has nothing to deliver but was finalized with P = 1"}));
  Trace good;
  good.add(Send{.consumer = 0,
                .entries = {entry(1, 8, true, std::nullopt, AckSet({0}))},
                .consumer_debit = 0});
  EXPECT_TRUE(Clean(check(broker(), good)));
}

TEST(MonitorBroker, B4_ConsumerDebitOtherThanTheFinalizedSumIsReported) {
  Trace t;
  t.add(Send{.consumer = 0,
             .entries = {entry(1, 10, true, 10), entry(2, 10, false, std::nullopt)},
             .consumer_debit = 20});
  EXPECT_TRUE(FirstViolation(check(broker(), t), RuleId::kB4,
                             {"consumer 0 debited 20 but the finalized sum is 10",
                              "10 permit(s) lost"}));
  Trace under;
  under.add(Send{.consumer = 0, .entries = {entry(1, 10, true, 10)}, .consumer_debit = 7});
  EXPECT_TRUE(FirstViolation(check(broker(), under), RuleId::kB4,
                             {"debited 7 but the finalized sum is 10", "3 permit(s) over-granted"}));
}

TEST(MonitorBroker, B4_LegacyDebitsThePreAdmissionSum) {
  Trace t;
  t.add(Send{.consumer = 0,
             .entries = {entry(1, 10, true, 10), entry(2, 10, false, std::nullopt)},
             .consumer_debit = 20});
  EXPECT_TRUE(Clean(check(broker(RulesetId::kLegacy), t)));
}

TEST(MonitorBroker, B6_EachAggregateDispatcherMustDebitTheFinalizedSum) {
  int aggregates = 0;
  for (DispatcherKind kind : all_dispatcher_kinds()) {
    if (!has_aggregate(kind)) continue;
    ++aggregates;
    SCOPED_TRACE(dispatcher_name(kind));
    Trace bad;
    bad.add(Send{.consumer = 0,
                 .dispatcher = kind,
                 .entries = {entry(1, 10, true, 10), entry(2, 10, false, std::nullopt)},
                 .consumer_debit = 10,
                 .dispatcher_debit = 20});
    EXPECT_TRUE(FirstViolation(check(broker(), bad), RuleId::kB6,
                               {std::string(dispatcher_name(kind)) + " aggregate debited 20",
                                "the finalized sum is 10"}));
    Trace good;
    good.add(Send{.consumer = 0,
                  .dispatcher = kind,
                  .entries = {entry(1, 10, true, 10), entry(2, 10, false, std::nullopt)},
                  .consumer_debit = 10,
                  .dispatcher_debit = 10});
    EXPECT_TRUE(Clean(check(broker(), good)));
  }
  EXPECT_EQ(aggregates, 6);
}

TEST(MonitorBroker, B6_SingleActiveDispatcherHasNoAggregate) {
  Trace bad;
  bad.add(Send{.consumer = 0,
               .dispatcher = DispatcherKind::kSingleActive,
               .entries = {entry(1, 10, true, 10)},
               .consumer_debit = 10,
               .dispatcher_debit = 10});
  EXPECT_TRUE(FirstViolation(check(broker(), bad), RuleId::kB6,
                             {"single_active dispatcher has no aggregate but debited 10"}));
  Trace good;
  good.add(Send{.consumer = 0,
                .dispatcher = DispatcherKind::kSingleActive,
                .entries = {entry(1, 10, true, 10)},
                .consumer_debit = 10});
  EXPECT_TRUE(Clean(check(broker(), good)));
}

TEST(MonitorBroker, B8_OverflowingSendFinalizedIsReported) {
  Trace t;
  t.add(Send{.consumer = 0,
             .entries = {entry(1, kMaxPermits, true, kMaxPermits), entry(2, 1, true, 1)},
             .consumer_debit = kMaxPermits + 1});
  EXPECT_TRUE(FirstViolation(check(broker(), t), RuleId::kB8,
                             {"although it overflows",
                              "2^31-1"}));
  // Atomic: nothing of the overflowing send is finalized.
  Trace good;
  good.add(Send{.consumer = 0,
                .entries = {entry(1, kMaxPermits, true, std::nullopt),
                            entry(2, 1, true, std::nullopt)},
                .consumer_debit = 0});
  EXPECT_TRUE(Clean(check(broker(), good)));
  Trace largest;  // 2^31-1 alone is in range
  largest.add(Send{.consumer = 0,
                   .entries = {entry(1, kMaxPermits, true, kMaxPermits)},
                   .consumer_debit = kMaxPermits});
  EXPECT_TRUE(Clean(check(broker(), largest)));
}

TEST(MonitorBroker, B8_OverflowingSendThatStillDebitsIsReported) {
  // Nothing of an overflowing send is finalized, so nothing may be debited either.
  Trace t;
  t.add(Send{.consumer = 0,
             .entries = {entry(1, kMaxPermits, true, std::nullopt),
                         entry(2, 1, true, std::nullopt)},
             .consumer_debit = kMaxPermits + 1});
  const MonitorReport r = check(broker(), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kB8, {"2147483648"}));
}

TEST(MonitorBroker, B10_NegativeFlowIsReported) {
  Trace t;
  t.wire_subscribed(4).add(flow(-1));
  EXPECT_TRUE(FirstViolation(check(wire(), t), RuleId::kB10,
                             {"Flow for consumer 0 on connection c1 carries -1 permits",
                              "Flow only adds"}));
  Trace zero;
  zero.wire_subscribed(4).add(flow(0));
  EXPECT_TRUE(Clean(check(wire(), zero)));
}

TEST(MonitorBroker, B11_SendAfterConsumerRemovedIsReported) {
  Trace t;
  t.add(Send{.consumer = 0, .entries = {entry(1, 1, true, 1)}, .consumer_debit = 1})
      .add(ConsumerRemoved{.consumer = 0})
      .add(Send{.consumer = 0, .entries = {entry(2, 1, true, 1)}, .consumer_debit = 1});
  EXPECT_TRUE(FirstViolation(check(broker(), t), RuleId::kB11,
                             {"send to consumer 0 after it was removed"}));
}

TEST(MonitorBroker, B11_ReplacementIncarnationWithTheSameConsumerIdMayBeSentTo) {
  // The client re-subscribes with the same consumer_id: a new broker consumer incarnation.
  Trace t;
  t.add(Send{.consumer = 0, .inc = n(1), .entries = {entry(1, 1, true, 1)}, .consumer_debit = 1})
      .add(ConsumerRemoved{.consumer = 0, .inc = n(1)})
      .add(Send{.consumer = 0, .inc = n(2), .entries = {entry(2, 1, true, 1)},
                .consumer_debit = 1});
  const MonitorReport r = check(broker(), t);
  EXPECT_TRUE(Clean(r));
}

TEST(MonitorBroker, E4_SerializedValueOtherThanTheFinalizedPIsReported) {
  Trace t;
  t.add(Send{.consumer = 0, .entries = {entry(1, 8, true, 3, AckSet({37}))}, .consumer_debit = 3})
      .add(message(1, 8));
  EXPECT_TRUE(FirstViolation(check(model(std::nullopt, std::nullopt), t), RuleId::kE4,
                             {"command 1 serialized message_permits = 8",
                              "its send finalized P = 3"}));
}

TEST(MonitorBroker, E4_B4_B6_B7_OneFinalizedValueEverywhere) {
  Trace t;
  t.add(Send{.consumer = 0,
             .dispatcher = DispatcherKind::kPersistentKeyShared,
             .entries = {entry(1, 8, true, 3, AckSet({37})), entry(2, 10, false, std::nullopt),
                         entry(3, 1, true, 1)},
             .consumer_debit = 4,
             .dispatcher_debit = 4})
      .add(message(1, 3, AckSet({37}), 8))
      .add(message(3, 1, {}, 1));
  EXPECT_TRUE(Clean(check(model(std::nullopt, std::nullopt), t)));
}

// ======================================================================================
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

TEST(MonitorDeviation, X1_C6_OldBrokerCompleteBatchEarlyFailureReturnsOne) {
  const MonitorReport r = check(model(16, 8), old_broker_command({}, 1, PermitSource::kLegacy));
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r);
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX1,
                      {"command 1 field absent (old broker) and checksum failure",
                       "returned the fallback 1 for a debit of 8"}));
  // Quiescence shows the 7 lost permits, explained by X1.
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX1,
                      {"broker available 8 + accumulator 1 = 9", "7 permit(s) lost",
                       "explained by known deviation X1"}));
  EXPECT_THAT(r.violations, Not(Contains(HasRule(RuleId::kX1))));
}

TEST(MonitorDeviation, X1_DecompressionFailureKnowsBAndIsExact) {
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
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX2, {"7 permit(s) invented"}));
}

TEST(MonitorDeviation, X3_S4_CryptoFailIsADeviationNotAViolation) {
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
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX5, {"1 permit(s) lost"}));
}

TEST(MonitorDeviation, X6_EarlyFailureCountsAckSetBitsBeyondB) {
  const MonitorReport r = check(
      model(16, 8), old_broker_command(AckSet::from_indexes({0, 2, 5, 9}), 4, PermitSource::kAckSet));
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r);
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX6,
                      {"command 1 field absent and checksum failure: counted 4 ack_set bits",
                       "for a debit of 3"}));
  EXPECT_TRUE(Reports(r.deviations, RuleId::kX6, {"1 permit(s) invented"}));
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
TEST(MonitorDeviation, X2_E2_WireOverGrantFromACryptoDiscardIsTheDeviation) {
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

TEST(MonitorDeviation, X3_E6_StallWhileCryptoFailHoldsEveryUnitIsTheDeviation) {
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
                      {"8 permit(s) lost", "explained by known deviation X3"}));
}

TEST(MonitorDeviation, X4_E5_HeldUnitsExcuseExactlyTheirShortfall) {
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
  EXPECT_TRUE(Reports(lost.deviations, RuleId::kX4, {"1 permit(s) lost", "explained"}));
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
    switch (*rc::gen::inRange(0, 26)) {
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
  for (std::size_t i = 0; i < events.size(); ++i) m.on_event(events[i], 100 + i);
  m.finish();
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
