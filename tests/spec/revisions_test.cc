// The proposal's revisions A-C (rulebook section 11) in the specification: the decision points
// each revision got wrong, in handle_command and in the Monitor. A trace of a revision passes
// that revision's rules and breaks rev-d at the finding's rule.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "spec/client_command.h"
#include "spec/monitor.h"
#include "spec/ruleset.h"
#include "tests/spec/monitor_testing.h"

namespace permitcheck::spec {
namespace {

using monitor_testing::n;
Id t(std::string s) { return Id::text(std::move(s)); }

// A client trace with q = 4 and t = 4 under `rules`.
TraceHeader client_header(RulesetId rules) {
  return TraceHeader{.source = TraceSource::kClient, .ruleset = rules, .q = 4, .t = 4};
}

bool has(const std::vector<Finding>& fs, RuleId rule) {
  for (const Finding& f : fs) {
    if (f.rule == rule) return true;
  }
  return false;
}

std::string show(const std::vector<Finding>& fs) {
  std::string out;
  for (const Finding& f : fs) out += format_finding(f) + "\n";
  return out;
}

// One incarnation on c1, Flow-enabled with the initial grant, then the command's events.
std::vector<Event> one_command(const CommandRun& run) {
  std::vector<Event> e = {IncOpen{.inc = n(1), .cnx = t("c1"), .consumer = 0},
                          IncFlowEnabled{.inc = n(1)},
                          Flow{.cnx = t("c1"), .consumer = 0, .permits = 4, .inc = n(1)}};
  e.insert(e.end(), run.events.begin(), run.events.end());
  const std::vector<Event> returns = returns_of(run);
  e.insert(e.end(), returns.begin(), returns.end());
  return e;
}

CommandSituation dead_letter_batch() {
  return CommandSituation{.inc = n(1), .cmd = n(1), .cnx = t("c1"), .message_permits = 2,
                          .batch_size = 2, .batched = true,
                          .fates = {IndexFate::kDeadLetter, IndexFate::kDeliver}};
}

TEST(Revisions, S5_RevBReleasesTheDeadLetterObjectTheMonitorCatchesIt) {
  const CommandRun b = handle_command(ruleset(RulesetId::kRevB), dead_letter_batch());
  const CommandRun d = handle_command(ruleset(RulesetId::kRevD), dead_letter_batch());
  EXPECT_TRUE(releases_at_skip(ruleset(RulesetId::kRevB), SkipReason::kDeadLetter));
  EXPECT_FALSE(releases_at_skip(ruleset(RulesetId::kRevD), SkipReason::kDeadLetter));
  EXPECT_TRUE(releases_at_skip(ruleset(RulesetId::kRevD), SkipReason::kDuplicate));  // S6
  EXPECT_EQ(b.events.size(), d.events.size() + 1);  // the x-skip-release marker
  const MonitorReport under_b = check_trace(client_header(RulesetId::kRevB), one_command(b));
  EXPECT_TRUE(under_b.violations.empty()) << show(under_b.violations);
  const MonitorReport under_d = check_trace(client_header(RulesetId::kRevD), one_command(b));
  EXPECT_TRUE(has(under_d.violations, RuleId::kS5)) << show(under_d.violations);
  EXPECT_TRUE(check_trace(client_header(RulesetId::kRevD), one_command(d)).violations.empty());
}

TEST(Revisions, K7_E2_RevBDoubleReturnFollowsRevBBreaksTheInvariant) {
  const CommandSituation dup{.inc = n(1), .cmd = n(1), .cnx = t("c1"), .message_permits = 1,
                             .batch_size = 1, .fates = {IndexFate::kDuplicate}};
  const CommandRun b = handle_command(ruleset(RulesetId::kRevB), dup);
  EXPECT_EQ(b.returned_by_command, 2);
  // Under its own ruleset the run follows revision B's K-rules, but the invariant E2 that
  // every revision promises is broken: the monitor checks invariants against the final rules.
  const MonitorReport under_b = check_trace(client_header(RulesetId::kRevB), one_command(b));
  EXPECT_FALSE(has(under_b.violations, RuleId::kK7)) << show(under_b.violations);
  EXPECT_TRUE(has(under_b.violations, RuleId::kE2)) << show(under_b.violations);
  EXPECT_TRUE(has(check_trace(client_header(RulesetId::kRevD), one_command(b)).violations, RuleId::kK7));
}

TEST(Revisions, C5_RevCClosesTheConnectionOverAnInconsistentField) {
  const CommandSituation bad{.inc = n(1), .cmd = n(1), .cnx = t("c1"), .message_permits = 7,
                             .batch_size = 2, .batched = true};
  const CommandRun c = handle_command(ruleset(RulesetId::kRevC), bad);
  EXPECT_TRUE(c.closes_connection);
  EXPECT_FALSE(handle_command(ruleset(RulesetId::kRevD), bad).closes_connection);
  EXPECT_TRUE(check_trace(client_header(RulesetId::kRevC), one_command(c)).violations.empty());
  EXPECT_TRUE(has(check_trace(client_header(RulesetId::kRevD), one_command(c)).violations, RuleId::kC5));
}

// An old message returns after its incarnation ended: on the same connection (replacement by
// CommandCloseConsumer) revision A credits the replacement (F5); on another connection it
// drops it, and crediting would break N3 even under rev-a.
std::vector<Event> return_after_inc_close(bool same_connection) {
  const Id cnx2 = same_connection ? t("c1") : t("c2");
  return {IncOpen{.inc = n(1), .cnx = t("c1"), .consumer = 0},
          IncFlowEnabled{.inc = n(1)},
          Flow{.cnx = t("c1"), .consumer = 0, .permits = 4, .inc = n(1)},
          Recv{.inc = n(1), .cmd = n(1), .message_permits = 1},
          Resolve{.cmd = n(1), .p = 1, .source = PermitSource::kExplicit},
          Metadata{.cmd = n(1), .batch_size = 1},
          Resolve{.cmd = n(1), .p = 1, .source = PermitSource::kExplicit},
          Claim{.cmd = n(1), .msg = t("m1"), .index = 0},
          Settle{.cmd = n(1), .n = 0},
          IncClose{.inc = n(1), .reason = same_connection ? CloseReason::kCloseConsumer
                                                          : CloseReason::kDisconnect},
          IncOpen{.inc = n(2), .cnx = cnx2, .consumer = 0},
          MsgReturn{.msg = t("m1"), .n = 1}};
}

TEST(Revisions, E3_N3_RevACreditsASameConnectionReplacement) {
  // Revision A's rule allows the credit (no N3), the E3 invariant does not.
  const MonitorReport a = check_trace(client_header(RulesetId::kRevA), return_after_inc_close(true));
  EXPECT_FALSE(has(a.violations, RuleId::kN3)) << show(a.violations);
  EXPECT_TRUE(has(a.violations, RuleId::kE3)) << show(a.violations);
  const MonitorReport d = check_trace(client_header(RulesetId::kRevD), return_after_inc_close(true));
  EXPECT_TRUE(has(d.violations, RuleId::kE3)) << show(d.violations);
  const MonitorReport other = check_trace(client_header(RulesetId::kRevA), return_after_inc_close(false));
  EXPECT_TRUE(has(other.violations, RuleId::kN3)) << show(other.violations);
}

// Revision A credits the late unit to the same-connection replacement: it is then the
// replacement's to flow. Its Flow of that unit is no over-grant; only the E3 invariant objects.
TEST(Revisions, E3_RevACreditedUnitIsTheSameConnectionReplacementsToFlow) {
  std::vector<Event> e = return_after_inc_close(true);
  e.push_back(IncFlowEnabled{.inc = n(2)});
  e.push_back(Flow{.cnx = t("c1"), .consumer = 0, .permits = 4, .inc = n(2)});
  e.push_back(Flow{.cnx = t("c1"), .consumer = 0, .permits = 1, .inc = n(2)});
  TraceHeader h = client_header(RulesetId::kRevA);
  h.t = 1;
  const MonitorReport a = check_trace(h, e);
  ASSERT_EQ(a.violations.size(), 1u) << show(a.violations);
  EXPECT_EQ(a.violations[0].rule, RuleId::kE3) << show(a.violations);
}

}  // namespace
}  // namespace permitcheck::spec
