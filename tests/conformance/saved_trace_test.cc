// One oracle (issue 33): what the scenario driver measured beside the wire (the drain, the
// legacy windows, the old client's slack, the field-absent fallback, a consumer gone, a
// malformed frame) is in the trace conform judges, as facts (spec/scenario_facts.h). Written
// out and read back, as `conform --trace-dir` saves and `validate` reads it, the trace gives
// exactly the run's findings and deviations: same rules, same lines, same words; each line
// within the trace. Dropping the fact changes what the saved trace gives (the fact carries it).
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/monitor.h"
#include "spec/scenario_facts.h"
#include "tests/conformance/official_client.h"
#include "trace/reader.h"
#include "trace/writer.h"

namespace permitcheck::conformance {
namespace {

using spec::RuleId;
using testing::details;
using testing::has;
using testing::reference_client;
using ::testing::HasSubstr;

// The findings of a trace as written to a file and read back (the writer, the reader, the
// monitor: what `validate` does), in the run's own form.
spec::MonitorReport saved_and_validated(const spec::TraceHeader& header,
                                        const std::vector<spec::Event>& events) {
  std::ostringstream out;
  EXPECT_TRUE(trace::write_trace(out, header, events).ok());
  const absl::StatusOr<trace::Trace> t = trace::read_trace_text(out.str());
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return {};
  spec::Monitor m(t->header);
  for (std::size_t i = 0; i < t->events.size(); ++i) m.on_event(t->events[i], t->lines[i]);
  m.finish();
  return {m.violations(), m.deviations()};
}

std::vector<std::string> lines_of(const std::vector<spec::Finding>& findings) {
  std::vector<std::string> v;
  for (const spec::Finding& f : findings) v.push_back(spec::format_finding(f));
  return v;
}

// The run's findings and deviations are the saved trace's, each at a line of the trace.
void expect_saved_trace_agrees(const ScenarioOutcome& o) {
  const spec::MonitorReport r = saved_and_validated(o.header, o.events);
  EXPECT_EQ(lines_of(r.violations), lines_of(o.violations)) << details(o);
  EXPECT_EQ(lines_of(r.deviations), lines_of(o.deviations)) << details(o);
  for (const spec::Finding& f : o.violations) {
    EXPECT_LE(f.line, o.events.size() + 1) << "past the trace's end: " << spec::format_finding(f);
  }
}

// The events without the scenario facts whose `ev` starts with `prefix`.
std::vector<spec::Event> without(const std::vector<spec::Event>& events, std::string_view prefix) {
  std::vector<spec::Event> v;
  for (const spec::Event& e : events) {
    const auto* x = std::get_if<spec::Extension>(&e);
    if (x == nullptr || !x->ev.starts_with(prefix)) v.push_back(e);
  }
  return v;
}

ScenarioParams checksum_case(std::int64_t b, bool send_field) {
  return ScenarioParams{.kind = ScenarioKind::kCorruptChecksum,
                        .send_field = send_field,
                        .entries = {EntrySpec{.batch_size = b, .batched = true,
                                              .fault = EntryFault::kChecksum}}};
}

// The legacy client returns 1 for a b8 failing its checksum: the drain measures 7 short, the
// window names L1, the finding is C7 at the x-drain line. Without the window fact the saved
// trace names no row (E5); without the drain fact, nothing.
TEST(SavedTrace, L1_C7_TheDrainAndTheWindowAreInTheTrace) {
  const ScenarioOutcome o = run_scenario(reference_client("legacy"), checksum_case(8, true));
  ASSERT_TRUE(has(o.violations, RuleId::kC7, "L1: b8 with a checksum failure (P = 8)"))
      << details(o);
  EXPECT_EQ(o.violations.back().line, o.events.size() + 1) << details(o);  // the x-drain
  expect_saved_trace_agrees(o);
  const spec::MonitorReport no_window =
      saved_and_validated(o.header, without(o.events, spec::kWindowEvent));
  EXPECT_TRUE(has(no_window.violations, RuleId::kE5, "too few")) << details(o);
  const spec::MonitorReport no_drain =
      saved_and_validated(o.header, without(o.events, spec::kDrainEvent));
  EXPECT_FALSE(has(no_drain.violations, RuleId::kC7)) << details(o);
}

// A correct client under an old broker: b4's checksum failure returns the fallback 1, the
// known deviation X1, with what the drain measured beside what X1 allows; the same in the
// saved trace, PASS. Without the early-failure fact the shortfall is E5.
TEST(SavedTrace, X1_E5_TheFallbacksExcuseIsInTheTrace) {
  const ScenarioOutcome o = run_scenario(reference_client(), checksum_case(4, false));
  EXPECT_FALSE(o.failed()) << details(o);
  ASSERT_TRUE(has(o.deviations, RuleId::kX1, "the drain measured 3 permits short, 1 returned"))
      << details(o);
  expect_saved_trace_agrees(o);
  const spec::MonitorReport no_entry =
      saved_and_validated(o.header, without(o.events, spec::kEarlyFailureEvent));
  EXPECT_TRUE(has(no_entry.violations, RuleId::kE5)) << details(o);
}

// An old client (it does not know message_permits) may keep T - 1 = 4 unrequested: the legacy
// client's 1 for b8 is the fallback, its drain numbers given with that slack. Without the
// old-client flag the saved trace would judge it as a new client's.
TEST(SavedTrace, X1_AnOldClientsSlackIsInTheTrace) {
  ClientSpec old = reference_client("legacy");
  old.knows_message_permits = false;
  const ScenarioOutcome o = run_scenario(old, checksum_case(8, true));
  EXPECT_FALSE(o.failed()) << details(o);
  ASSERT_TRUE(has(o.deviations, RuleId::kX1, "(old client)")) << details(o);
  expect_saved_trace_agrees(o);
  std::vector<spec::Event> as_new = o.events;
  for (spec::Event& e : as_new) {
    auto* x = std::get_if<spec::Extension>(&e);
    if (x == nullptr) continue;
    if (std::optional<spec::DrainFact> d = spec::parse_drain_event(x->ev)) {
      d->old_client = false;
      x->ev = spec::drain_event(*d);
    }
  }
  const spec::MonitorReport r = saved_and_validated(o.header, as_new);
  EXPECT_FALSE(has(r.deviations, RuleId::kX1, "(old client)")) << details(o);
}

// An ACTIVE_CONSUMER_CHANGE counted as a message: the drain measures the surplus, E2 at the
// x-drain line, the same in the saved trace.
TEST(SavedTrace, E2_ANonMessagePermitsSurplusIsTheDrainFactsFinding) {
  ClientSpec c = reference_client();
  c.command += " --mutant non-message-permit";
  const ScenarioOutcome o = run_scenario(
      c, ScenarioParams{.kind = ScenarioKind::kActiveConsumerChange, .entries = {EntrySpec{}}});
  ASSERT_TRUE(has(o.violations, RuleId::kE2, "too many")) << details(o);
  expect_saved_trace_agrees(o);
  EXPECT_FALSE(has(saved_and_validated(o.header, without(o.events, spec::kDrainEvent)).violations,
                   RuleId::kE2, "too many"))
      << details(o);
}

// The client closes its consumer on a checksum failure and stays: no subscribed consumer, under
// the scenario's rule (C7), at the fact's line; the same in the saved trace.
TEST(SavedTrace, C7_AConsumerTheClientClosedIsAFactInTheTrace) {
  ClientSpec c = reference_client();
  c.command += " --mutant close-on-checksum";
  const ScenarioOutcome o = run_scenario(c, checksum_case(3, true));
  ASSERT_TRUE(has(o.violations, RuleId::kC7, "no subscribed consumer")) << details(o);
  EXPECT_FALSE(o.client_failure.has_value()) << details(o);
  expect_saved_trace_agrees(o);
  EXPECT_FALSE(has(saved_and_validated(o.header, without(o.events, spec::kNoConsumerEvent))
                       .violations,
                   RuleId::kC7, "no subscribed consumer"))
      << details(o);
}

// The client writes a frame whose command does not parse: a malformed frame under C7; the same
// in the saved trace.
TEST(SavedTrace, C7_AMalformedFrameIsAFactInTheTrace) {
  ClientSpec c = reference_client();
  c.command += " --mutant garbage-on-checksum";
  const ScenarioOutcome o = run_scenario(c, checksum_case(3, true));
  ASSERT_TRUE(has(o.violations, RuleId::kC7, "client sent a malformed frame")) << details(o);
  expect_saved_trace_agrees(o);
  EXPECT_FALSE(has(saved_and_validated(o.header, without(o.events, spec::kMalformedFrameEvent))
                       .violations,
                   RuleId::kC7, "malformed frame"))
      << details(o);
}

// The legacy client writes its queued Flow to the replacement (L11): N6, at the x-drain line,
// the same in the saved trace. The window depends on timing; whatever the run saw, the saved
// trace agrees with it.
TEST(SavedTrace, N6_L11_AFlowAroundCloseIsJudgedTheSameInTheSavedTrace) {
  ClientSpec c = reference_client("legacy");
  const ScenarioOutcome o = run_scenario(c, fixed_cases(ScenarioKind::kFlowAroundClose, 10, 5)[0]);
  expect_saved_trace_agrees(o);
  if (o.not_opened.empty() && !o.windows.empty()) {
    EXPECT_TRUE(has(o.violations, RuleId::kN6, "L11")) << details(o);
  }
}

// The reference client passes a scenario whose windows open: its facts give the saved trace
// nothing either (no false alarm).
TEST(SavedTrace, ACorrectClientsSavedTraceOfAHeldWindowIsClean) {
  const ScenarioOutcome o = run_scenario(
      reference_client(), fixed_cases(ScenarioKind::kHeldCloseConsumer, 10, 5)[0]);
  EXPECT_FALSE(o.failed()) << details(o);
  expect_saved_trace_agrees(o);
  EXPECT_TRUE(saved_and_validated(o.header, o.events).violations.empty());
}

}  // namespace
}  // namespace permitcheck::conformance
