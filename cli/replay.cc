#include "cli/replay.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "cli/report.h"
#include "spec/absl_view.h"

namespace permitcheck::cli {
namespace {

// The monitor with the trace's own line numbers.
spec::MonitorReport run(const trace::Trace& t, spec::RulesetId id) {
  spec::TraceHeader h = t.header;
  h.ruleset = id;
  spec::Monitor m(h, spec::MonitorOptions{.retain_ledger = false});
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    m.on_event(t.events[i], i < t.lines.size() ? t.lines[i] : i + 2);
  }
  m.finish();
  return {m.violations(), m.deviations()};
}

constexpr std::string_view kNoImplementation =
    "reference implementation: not replayed (a trace records what was observed, not the actions "
    "that drive the implementation; rerun `permitcheck check` with the seed printed with the "
    "counterexample to reproduce it there)";

}  // namespace

Replayed replay(trace::Trace t) {
  Replayed r;
  r.trace = std::move(t);
  for (const spec::Ruleset* rules : spec::all_rulesets()) {
    r.runs.push_back({rules->id, rules->id == r.trace.header.ruleset, run(r.trace, rules->id)});
  }
  r.implementation_note = std::string(kNoImplementation);
  return r;
}

int replay_exit_code(const Replayed& r) {
  for (const RulesetRun& run : r.runs) {
    if (run.from_header && !run.report.violations.empty()) return kExitViolation;
  }
  return kExitPass;
}

std::string format_replay(const Replayed& r, std::string_view name, ReportFormat format) {
  std::string out;
  if (format == ReportFormat::kJson) {
    absl::StrAppend(&out, "{\"tool\":\"permitcheck replay\",\"file\":", json_string(name),
                    ",\"events\":", r.trace.events.size(), ",\"exit_code\":", replay_exit_code(r),
                    ",\"specification\":[");
    for (std::size_t i = 0; i < r.runs.size(); ++i) {
      const RulesetRun& run = r.runs[i];
      absl::StrAppend(&out, i ? "," : "", "\n{\"ruleset\":",
                      json_string(spec::ruleset(run.ruleset).name),
                      ",\"from_header\":", run.from_header ? "true" : "false", ",\"violations\":[");
      for (std::size_t k = 0; k < run.report.violations.size(); ++k) {
        absl::StrAppend(&out, k ? "," : "", finding_json(run.report.violations[k]));
      }
      out += "],\"deviations\":[";
      for (std::size_t k = 0; k < run.report.deviations.size(); ++k) {
        absl::StrAppend(&out, k ? "," : "", finding_json(run.report.deviations[k]));
      }
      out += "]}";
    }
    absl::StrAppend(&out, "],\"implementation\":{\"replayed\":",
                    r.implementation_replayed ? "true" : "false", ",\"note\":",
                    json_string(r.implementation_note), "}}\n");
    return out;
  }
  if (format == ReportFormat::kJunit) {
    JunitSuite suite{.name = "permitcheck replay", .suite = std::string(name)};
    for (const RulesetRun& run : r.runs) {
      JunitCase c{.classname = "permitcheck.replay", .name = std::string(spec::ruleset(run.ruleset).name)};
      std::string body;
      for (const spec::Finding& f : run.report.violations) absl::StrAppend(&body, spec::format_finding(f), "\n");
      for (const spec::Finding& f : run.report.deviations) absl::StrAppend(&body, "known deviation: ", spec::format_finding(f), "\n");
      if (run.from_header && !run.report.violations.empty()) {
        c.failure = JunitCase::Failure{"violation", spec::format_finding(run.report.violations[0]), body};
      } else {
        c.system_out = body;
      }
      suite.cases.push_back(std::move(c));
    }
    return format_junit(suite);
  }
  absl::StrAppend(&out, "Replay of ", av(name), " (", r.trace.events.size(), " events)\n");
  for (const RulesetRun& run : r.runs) {
    const spec::MonitorReport& rep = run.report;
    absl::StrAppend(&out, "specification, ruleset ", av(spec::ruleset(run.ruleset).name),
                    run.from_header ? " (the trace's ruleset)" : "", ": ",
                    rep.violations.empty() ? "holds" : absl::StrCat(rep.violations.size(), " violation", rep.violations.size() == 1 ? "" : "s"),
                    rep.deviations.empty() ? "" : absl::StrCat(", ", rep.deviations.size(), " known deviation", rep.deviations.size() == 1 ? "" : "s"),
                    "\n");
    for (const spec::Finding& f : rep.violations) absl::StrAppend(&out, "  ", spec::format_finding(f), "\n");
    for (const spec::Finding& f : rep.deviations) absl::StrAppend(&out, "  known deviation: ", spec::format_finding(f), "\n");
  }
  absl::StrAppend(&out, r.implementation_note, "\n");
  absl::StrAppend(&out, "verdict: ", replay_exit_code(r) == kExitViolation ? "the counterexample reproduces (violation under the trace's ruleset)" : "no violation under the trace's ruleset", "\n");
  return out;
}

}  // namespace permitcheck::cli
