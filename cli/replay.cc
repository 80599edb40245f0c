#include "cli/replay.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "report/findings.h"
#include "report/json.h"
#include "base/absl_view.h"
#include "spec/outcome.h"
#include "validate/junit.h"
#include "validate/report.h"

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

// The rule IDs the findings of every run name.
std::set<spec::RuleId> rules_named(const Replayed& r) {
  std::set<spec::RuleId> named;
  for (const RulesetRun& run : r.runs) {
    for (const spec::Finding& f : run.report.violations) named.insert(f.rule);
    for (const spec::Finding& f : run.report.deviations) named.insert(f.rule);
  }
  return named;
}

}  // namespace

Replayed replay(trace::Trace t, bool with_drafts) {
  Replayed r;
  r.trace = std::move(t);
  for (const spec::Ruleset* rules : spec::all_rulesets()) {
    const bool own = rules->id == r.trace.header.ruleset;
    if (spec::is_draft(rules->id) && !own && !with_drafts) continue;
    r.runs.push_back({rules->id, own, run(r.trace, rules->id)});
  }
  r.implementation_note = std::string(kNoImplementation);
  return r;
}

int replay_exit_code(const Replayed& r) {
  for (const RulesetRun& run : r.runs) {
    if (run.from_header && !run.report.violations.empty()) return spec::kExitViolation;
  }
  return spec::kExitPass;
}

std::string format_replay(const Replayed& r, std::string_view name, validate::ReportFormat format) {
  std::string out;
  if (format == validate::ReportFormat::kJson) {
    using Json = nlohmann::ordered_json;
    Json runs = Json::array();
    for (const RulesetRun& run : r.runs) {
      Json violations = Json::array(), deviations = Json::array();
      for (const spec::Finding& f : run.report.violations) {
        violations.push_back(validate::finding_object(f));
      }
      for (const spec::Finding& f : run.report.deviations) {
        deviations.push_back(validate::finding_object(f));
      }
      runs.push_back({{"ruleset", std::string(spec::ruleset(run.ruleset).name)},
                      {"from_header", run.from_header},
                      {"violations", std::move(violations)},
                      {"deviations", std::move(deviations)}});
    }
    const Json doc = {
        {"tool", "permitcheck replay"},
        {"file", std::string(name)},
        {"events", r.trace.events.size()},
        {"exit_code", replay_exit_code(r)},
        {"specification", std::move(runs)},
        {"implementation",
         {{"replayed", r.implementation_replayed}, {"note", r.implementation_note}}}};
    return report::json_line(doc);
  }
  if (format == validate::ReportFormat::kJunit) {
    validate::JunitSuite suite{.name = "permitcheck replay", .suite = std::string(name)};
    for (const RulesetRun& run : r.runs) {
      validate::JunitCase c{.classname = "permitcheck.replay", .name = std::string(spec::ruleset(run.ruleset).name)};
      std::string body;
      for (const spec::Finding& f : run.report.violations) absl::StrAppend(&body, spec::format_finding(f), "\n");
      for (const spec::Finding& f : run.report.deviations) absl::StrAppend(&body, "known deviation: ", spec::format_finding(f), "\n");
      if (run.from_header && !run.report.violations.empty()) {
        c.failure = validate::JunitCase::Failure{"violation", spec::format_finding(run.report.violations[0]), body};
      } else {
        c.system_out = body;
      }
      suite.cases.push_back(std::move(c));
    }
    return validate::format_junit(suite);
  }
  absl::StrAppend(&out, "Replay of ", to_absl(name), " (", r.trace.events.size(), " events)\n");
  for (const RulesetRun& run : r.runs) {
    const spec::MonitorReport& rep = run.report;
    absl::StrAppend(&out, "specification, ruleset ", to_absl(spec::ruleset(run.ruleset).name),
                    run.from_header ? " (the trace's ruleset)" : "", ": ",
                    rep.violations.empty() ? "holds" : absl::StrCat(rep.violations.size(), " violation", rep.violations.size() == 1 ? "" : "s"),
                    rep.deviations.empty() ? "" : absl::StrCat(", ", rep.deviations.size(), " known deviation", rep.deviations.size() == 1 ? "" : "s"),
                    "\n");
    absl::StrAppend(&out, report::findings_text(rep.violations, rep.deviations,
                                                {.deviation_mark = "known deviation: "}));
  }
  absl::StrAppend(&out, r.implementation_note, "\n");
  absl::StrAppend(&out, "verdict: ", replay_exit_code(r) == spec::kExitViolation ? "the counterexample reproduces (violation under the trace's ruleset)" : "no violation under the trace's ruleset", "\n");
  absl::StrAppend(&out, report::rules_legend(rules_named(r)));
  return out;
}

std::optional<trace::Trace> read_counterexample(const std::string& path, std::istream& in,
                                                std::string_view command, std::ostream& err) {
  const std::string shown = path == "-" ? "<stdin>" : path;
  trace::ReaderOptions options;
  options.max_line_bytes = validate::kValidateMaxLineBytes;
  absl::StatusOr<trace::Trace> t;
  if (path == "-") {
    t = trace::read_trace(in, options);
  } else {
    std::ifstream file(path, std::ios::binary);
    if (!file.is_open()) {
      err << "permitcheck " << command << ": " << shown << ": cannot open: " << std::strerror(errno) << "\n";
      return std::nullopt;
    }
    t = trace::read_trace(file, options);
  }
  if (!t.ok()) {
    err << "permitcheck " << command << ": " << shown << ": " << t.status().message() << "\n";
    return std::nullopt;
  }
  return *std::move(t);
}

}  // namespace permitcheck::cli
