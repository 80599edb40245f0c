// A scripted scenario's driver facts (spec/scenario_facts.h): each name round-trips, names of
// another shape are not facts, and the monitor judges them at their lines (monitor_scenario.cc,
// spec/scenario_verdict.h judge_scenario): the drain, the legacy windows, the late Flow, the
// field-absent excuse, a consumer gone and a malformed frame.
#include "spec/scenario_facts.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/monitor.h"
#include "spec/scenario_verdict.h"
#include "tests/spec/monitor_testing.h"

namespace permitcheck::spec {
namespace {

using namespace monitor_testing;  // NOLINT: the shared shorthands of the monitor's tests
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const DrainFact kShort{.scenario = "corrupt_checksum", .ran = true, .measured = true,
                       .delta = -7, .granted = 10, .debited = 8,
                       .text = "drain: 3 single messages until the client flushed"};

Extension fact(std::string ev) { return Extension{.ev = std::move(ev)}; }

TEST(ScenarioFacts, EveryFactRoundTripsWithSpacesInItsLastField) {
  EXPECT_EQ(drain_event(kShort),
            "x-drain scenario=corrupt_checksum ran=1 measured=1 delta=-7 short_min=0 "
            "short_max=0 granted=10 debited=8 old_client=0 payload_failure=0 "
            "text=drain: 3 single messages until the client flushed");
  EXPECT_EQ(parse_drain_event(drain_event(kShort)), kShort);
  const std::vector<WindowFact> windows = {
      {.kind = WindowKind::kPayloadFailure, .stage = FailureStage::kMetadata, .p = 8,
       .what = "b8 with a metadata failure (P = 8)"},
      {.kind = WindowKind::kTruncatedBatch, .p = 8, .handed = 3, .past_last = true, .what = "b8"},
      {.kind = WindowKind::kHeldAcross, .same_connection = true, .what = "3 held"},
      {.kind = WindowKind::kStaleEpoch, .what = "2 stale"},
      {.kind = WindowKind::kFlowAroundClose, .n = 5, .what = "a Flow of T = 5"},
      {.kind = WindowKind::kBeforeStart, .n = 2, .what = "2 singles"}};
  for (const WindowFact& w : windows) EXPECT_EQ(parse_window_event(window_event(w)), w);
  EXPECT_EQ(window_event(windows[0]),
            "x-window kind=payload_failure stage=metadata p=8 what=b8 with a metadata failure "
            "(P = 8)");
  const EarlyFailure partial{.name = "b8 (partial)", .p = 5, .ack_set = AckSet({7, -1})};
  EXPECT_EQ(early_failure_event(partial), "x-early-failure p=5 ack_set=7,-1 name=b8 (partial)");
  EXPECT_EQ(parse_early_failure_event(early_failure_event(partial)), partial);
  const EarlyFailure whole{.name = "b8", .p = 8};
  EXPECT_EQ(parse_early_failure_event(early_failure_event(whole)), whole);
  EXPECT_EQ(parse_late_flow_event(late_flow_event(4)), 4);
  const NoConsumer gone{.rule = RuleId::kC7, .scenario = "corrupt_checksum"};
  EXPECT_EQ(parse_no_consumer_event(no_consumer_event(gone)), gone);
  const MalformedFrame bad{.rule = RuleId::kE3, .scenario = "reconnect",
                           .error = "connection c1: frame size 5 below 8"};
  EXPECT_EQ(parse_malformed_frame_event(malformed_frame_event(bad)), bad);
}

TEST(ScenarioFacts, NamesOfAnotherShapeAreNotFacts) {
  for (const char* ev : {"x-drain", "x-drains scenario=s ran=1",
                         "x-drain scenario=s ran=2 measured=1 delta=0 short_min=0 short_max=0 "
                         "granted=0 debited=0 old_client=0 payload_failure=0 text=",
                         "x-drain scenario=s ran=1 measured=1 delta=x short_min=0 short_max=0 "
                         "granted=0 debited=0 old_client=0 payload_failure=0 text=",
                         "x-drain scenario=s ran=1 measured=1 delta=0"}) {
    EXPECT_EQ(parse_drain_event(ev), std::nullopt) << ev;
  }
  for (const char* ev : {"x-window kind=nothing what=x", "x-window kind=payload_failure "
                         "stage=nowhere p=8 what=x", "x-window kind=before_start what=x"}) {
    EXPECT_EQ(parse_window_event(ev), std::nullopt) << ev;
  }
  EXPECT_EQ(parse_early_failure_event("x-early-failure p=8 ack_set=1,a name=b8"), std::nullopt);
  EXPECT_EQ(parse_late_flow_event("x-late-flow permits=many"), std::nullopt);
  EXPECT_EQ(parse_no_consumer_event("x-no-subscribed-consumer rule=Z9 scenario=s"), std::nullopt);
  EXPECT_EQ(parse_no_consumer_event("x-no-subscribed-consumer rule=C7 scenario=a b"),
            std::nullopt);
  EXPECT_EQ(parse_malformed_frame_event("x-malformed-frame rule=C7 error=x"), std::nullopt);
}

// A legacy client's b8 checksum failure returned 1: the drain measures 7 short, reported at the
// x-drain line under the window's row (L1, C7).
TEST(ScenarioFacts, L1_C7_TheDrainsShortfallIsReportedAtItsLineUnderTheWindowsRule) {
  Trace t;
  t.wire_subscribed(10)
      .add(fact(window_event({.kind = WindowKind::kPayloadFailure, .p = 8,
                              .what = "b8 with a checksum failure (P = 8)"})))
      .add(fact(drain_event(kShort)));
  const MonitorReport r = check(wire(10, 5), t);
  ASSERT_EQ(r.violations.size(), 1u) << dump(r.violations);
  EXPECT_EQ(r.violations[0].rule, RuleId::kC7);
  EXPECT_EQ(r.violations[0].line, t.events().size() + 1);
  EXPECT_THAT(r.violations[0].explanation,
              HasSubstr("L1: b8 with a checksum failure (P = 8): the client returned 7 permits "
                        "too few"));
  // The same drain without the window: the invariant's finding (E5), at the same line.
  Trace bare;
  bare.wire_subscribed(10).add(fact(drain_event(kShort)));
  const MonitorReport e5 = check(wire(10, 5), bare);
  ASSERT_EQ(e5.violations.size(), 1u) << dump(e5.violations);
  EXPECT_EQ(e5.violations[0].rule, RuleId::kE5);
  // Under legacy the invariants are not promised: the drain's numbers are no finding there.
  EXPECT_TRUE(Clean(check(wire(10, 5, RulesetId::kLegacy), t)));
}

TEST(ScenarioFacts, E2_ASurplusIsTheDrainsFindingAndABalancedDrainIsNone) {
  DrainFact over = kShort;
  over.delta = 3;
  Trace t;
  t.wire_subscribed(10).add(fact(drain_event(over)));
  const MonitorReport r = check(wire(10, 5), t);
  ASSERT_EQ(r.violations.size(), 1u) << dump(r.violations);
  EXPECT_EQ(r.violations[0].rule, RuleId::kE2);
  EXPECT_EQ(r.violations[0].line, t.events().size() + 1);
  DrainFact balanced = kShort;
  balanced.delta = 0;
  Trace ok;
  ok.wire_subscribed(10).add(fact(drain_event(balanced)));
  EXPECT_TRUE(Clean(check(wire(10, 5), ok)));
}

// The old client's slack (T - 1, with the header's T): 3 short is within it, 7 short is not,
// and the finding gives the range.
TEST(ScenarioFacts, E5_AnOldClientsSlackComesFromTheFactAndTheHeadersT) {
  DrainFact old = kShort;
  old.old_client = true;
  old.delta = -3;
  Trace within;
  within.wire_subscribed(10).add(fact(drain_event(old)));
  EXPECT_TRUE(Clean(check(wire(10, 5), within)));
  old.delta = -7;
  Trace beyond;
  beyond.wire_subscribed(10).add(fact(drain_event(old)));
  const MonitorReport r = check(wire(10, 5), beyond);
  ASSERT_EQ(r.violations.size(), 1u) << dump(r.violations);
  EXPECT_EQ(r.violations[0].rule, RuleId::kE5);
  EXPECT_THAT(r.violations[0].explanation, HasSubstr("returned 3 to 7 permits too few"));
}

TEST(ScenarioFacts, N6_L11_ALateFlowWithABalancedDrainIsTheOverGrant) {
  DrainFact balanced = kShort;
  balanced.delta = 0;
  Trace t;
  t.wire_subscribed(10).add(fact(late_flow_event(5))).add(fact(drain_event(balanced)));
  const MonitorReport r = check(wire(10, 5), t);
  ASSERT_EQ(r.violations.size(), 1u) << dump(r.violations);
  EXPECT_EQ(r.violations[0].rule, RuleId::kN6);
  EXPECT_EQ(r.violations[0].line, t.events().size() + 1);
  EXPECT_THAT(r.violations[0].explanation, HasSubstr("L11: a Flow of 5 reached the replacement"));
}

// An old broker (field absent): b8 failing its checksum may return 1 (X1). The E5 at the
// quiescence before the drain becomes the deviation; the drain's own line carries the excuse,
// with what the fallback allows beside what was measured.
TEST(ScenarioFacts, X1_E5_TheFallbacksExcuseTurnsTheEarlierE5IntoTheDeviation) {
  Trace t;
  t.wire_subscribed(10)
      .add(message(1, std::nullopt, {}, 8))
      .add(Ack{.cnx = Id::text("c1"), .consumer = 0, .cmd = Id::number(1)})
      .add(Flow{.cnx = Id::text("c1"), .consumer = 0, .permits = 1})
      .add(quiescent());
  const MonitorReport before = check(wire(10, 5), t);
  ASSERT_FALSE(before.violations.empty());
  ASSERT_EQ(before.violations[0].rule, RuleId::kE5) << dump(before.violations);
  const std::uint64_t e5_line = before.violations[0].line;
  t.add(fact(early_failure_event({.name = "b8", .p = 8}))).add(fact(drain_event(kShort)));
  const MonitorReport r = check(wire(10, 5), t);
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r.violations);
  ASSERT_EQ(r.deviations.size(), 2u) << dump(r.deviations);
  EXPECT_EQ(r.deviations[0].rule, RuleId::kX1);
  EXPECT_EQ(r.deviations[0].line, e5_line);
  EXPECT_THAT(r.deviations[0].explanation, HasSubstr("; explained by known deviation b8"));
  EXPECT_EQ(r.deviations[1].rule, RuleId::kX1);
  EXPECT_EQ(r.deviations[1].line, t.events().size() + 1);
  EXPECT_EQ(r.deviations[1].explanation,
            "b8 (P = 8) may return 1 with the field absent (old broker): the fallback allows 1 "
            "returned, 7 permits short; the drain measured 7 permits short, 1 returned "
            "(drain: 3 single messages until the client flushed)");
}

// What a driver saw of the client is reported at its fact's line under the scenario's rule,
// and is never explained away by the fallback, even where that rule is E5.
TEST(ScenarioFacts, E5_X1_AConsumerGoneAndAMalformedFrameAreFindingsNoExcuseRemoves) {
  Trace t;
  t.wire_subscribed(10)
      .add(fact(no_consumer_event({.rule = RuleId::kE5, .scenario = "complete_batches"})))
      .add(fact(malformed_frame_event({.rule = RuleId::kE5, .scenario = "complete_batches",
                                       .error = "connection c1: bad frame"})))
      .add(fact(early_failure_event({.name = "b8", .p = 8})))
      .add(fact(drain_event({.scenario = "complete_batches", .granted = 10, .debited = 10})));
  const MonitorReport r = check(wire(10, 5), t);
  ASSERT_EQ(r.violations.size(), 2u) << dump(r.violations);
  EXPECT_EQ(r.violations[0].rule, RuleId::kE5);
  EXPECT_EQ(r.violations[0].line, 6u);
  EXPECT_EQ(r.violations[0].explanation,
            "at quiescence the client has no subscribed consumer (it closed its consumer or "
            "connection during complete_batches)");
  EXPECT_EQ(r.violations[1].line, 7u);
  EXPECT_EQ(r.violations[1].explanation, "client sent a malformed frame: connection c1: bad frame");
  // The excuse is made (no drain ran: 10 granted, 10 debited, 7 lost to the fallback leaves 3
  // unrequested, below T = 5), and the driver's findings stay.
  ASSERT_EQ(r.deviations.size(), 1u) << dump(r.deviations);
  EXPECT_EQ(r.deviations[0].rule, RuleId::kX1);
  EXPECT_EQ(r.deviations[0].line, t.events().size() + 1);
  EXPECT_THAT(r.deviations[0].explanation, HasSubstr("no drain ran; at quiescence 10 granted"));
}

TEST(ScenarioFacts, JudgeScenarioNamesTheRowsOpenedAndFound) {
  const ScenarioFacts facts{
      .windows = {{.kind = WindowKind::kPayloadFailure, .p = 8, .what = "b8"},
                  {.kind = WindowKind::kTruncatedBatch, .p = 4, .handed = 3, .what = "exact"},
                  {.kind = WindowKind::kFlowAroundClose, .n = 5, .what = "a Flow of T = 5"}},
      .drain = kShort};
  const ScenarioJudgement j = judge_scenario(facts, 10, 5);
  EXPECT_THAT(j.rows, ElementsAre("L1", "L11"));  // b4 cut after 3: legacy's D + 1 is exact
  EXPECT_THAT(j.found_rows, ElementsAre("L1"));
  ASSERT_EQ(j.violations.size(), 1u);
  EXPECT_EQ(j.violations[0].rule, RuleId::kC7);
  EXPECT_FALSE(j.excuse.has_value());
}

}  // namespace
}  // namespace permitcheck::spec
