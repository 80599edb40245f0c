// The prefetch gauge fact and its M2 decision (spec/prefetch_gauge.h), alone and through the
// Monitor reading it from a trace.
#include "spec/prefetch_gauge.h"

#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/monitor.h"
#include "tests/spec/monitor_testing.h"

namespace permitcheck::spec {
namespace {

using namespace monitor_testing;  // NOLINT: the shared shorthands of the monitor's tests

TEST(PrefetchGauge, EventNameRoundTrips) {
  const PrefetchGauge g{.consumer = 3, .gauge = -2, .held = 7};
  EXPECT_EQ(prefetch_gauge_event(g), "x-prefetch-gauge consumer=3 gauge=-2 held=7");
  EXPECT_EQ(parse_prefetch_gauge_event(prefetch_gauge_event(g)), g);
}

TEST(PrefetchGauge, OtherExtensionsAndMalformedNamesAreNotGaugeFacts) {
  for (const char* ev : {"x-skip-release", "x-prefetch-gauge", "x-prefetch-gauge consumer=1 gauge=2",
                         "x-prefetch-gauge consumer=1 gauge=2 held=x", "x-prefetch-gauge consumer=-1 gauge=2 held=1",
                         "x-prefetch-gauge held=1 gauge=2 consumer=1", "x-prefetch-gauges consumer=1 gauge=2 held=1",
                         "x-prefetch-gauge consumer=1 gauge=2 held=1 extra=0"}) {
    EXPECT_EQ(parse_prefetch_gauge_event(ev), std::nullopt) << ev;
  }
}

TEST(PrefetchGauge, M2_GaugeAboveWhatIsHeldIsALeakUnderRevD) {
  const std::optional<std::string> m2 =
      prefetch_gauge_leak(rev_d(), {.consumer = 0, .gauge = 1, .held = 0});
  ASSERT_TRUE(m2.has_value());
  EXPECT_EQ(*m2, "consumer 0 prefetch count gauge is 1 but 0 messages are prefetched (leak)");
  EXPECT_EQ(prefetch_gauge_leak(rev_d(), {.consumer = 0, .gauge = 2, .held = 2}), std::nullopt);
  // Legacy Pulsar leaks them (section 10's L6): no M2 promise to break there.
  EXPECT_EQ(prefetch_gauge_leak(legacy(), {.consumer = 0, .gauge = 1, .held = 0}), std::nullopt);
}

TEST(PrefetchGauge, M2_TheMonitorJudgesTheFactAtItsLine) {
  Trace t;
  t.subscribed(1, 4).add(Extension{.ev = prefetch_gauge_event({.consumer = 1, .gauge = 1, .held = 0})});
  const MonitorReport r = check(model(4, 2), t);
  ASSERT_EQ(r.violations.size(), 1u) << dump(r.violations);
  EXPECT_EQ(r.violations[0].rule, RuleId::kM2);
  EXPECT_EQ(r.violations[0].line, t.events().size() + 1);  // header line 1, events from line 2
  EXPECT_THAT(r.violations[0].explanation, ::testing::HasSubstr("prefetch count gauge is 1 but 0"));
}

TEST(PrefetchGauge, AGaugeThatAgreesIsClean) {
  Trace t;
  t.subscribed(1, 4).add(Extension{.ev = prefetch_gauge_event({.consumer = 1, .gauge = 0, .held = 0})});
  EXPECT_TRUE(Clean(check(model(4, 2), t)));
  Trace legacy_run;
  legacy_run.subscribed(1, 4).add(Extension{.ev = prefetch_gauge_event({.consumer = 1, .gauge = 1, .held = 0})});
  EXPECT_TRUE(Clean(check(model(4, 2, RulesetId::kLegacy), legacy_run)));
}

}  // namespace
}  // namespace permitcheck::spec
