#include "cli/conform_report.h"


#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "nlohmann/json.hpp"
#include "report/findings.h"
#include "report/json.h"
#include "report/output.h"
#include "validate/junit.h"
#include "validate/report.h"

#ifdef PERMITCHECK_HAVE_CONFORMANCE
#include "cli/explain.h"
#include "conformance/bug_catalogue.h"
#include "conformance/client_presets.h"
#include "conformance/conform.h"
#include "spec/monitor.h"
#include "spec/outcome.h"
#include "spec/permit_state.h"
#include "spec/plain_text.h"
#include "trace/writer.h"
#endif

#ifdef PERMITCHECK_HAVE_CONFORMANCE

namespace permitcheck::cli {
namespace {

using conformance::ConformReport;
using conformance::ScenarioReport;

// The settings as the report was run with: Q and T as the run settled them (given, preset or
// inferred by the flow probe).
RunSettings settled(RunSettings s, const ConformReport& r) {
  s.q = r.settings.q;
  s.threshold = r.settings.t;
  return s;
}


trace::Trace as_trace(const conformance::ScenarioOutcome& o) {
  trace::Trace t{o.header, o.events, {}};
  for (std::size_t i = 0; i < o.events.size(); ++i) t.lines.push_back(i + 2);
  return t;
}

// The explanation of a run's trace, with the run's findings (a crash, the drain's numbers,
// a row attribution), not only what the monitor sees in the trace alone.
Explained explained(const conformance::ScenarioOutcome& o) {
  Explained e = explain(as_trace(o));
  e.violations = o.violations;
  e.deviations = o.deviations;
  return e;
}

// The distinct rule IDs of a run's violations, in order.
std::vector<std::string> rule_names(const conformance::ScenarioOutcome& o) {
  std::set<std::string> rules;
  for (const spec::Finding& f : o.violations) rules.insert(std::string(spec::rule_name(f.rule)));
  return {rules.begin(), rules.end()};
}

std::string rules_list(const conformance::ScenarioOutcome& o) {
  return absl::StrJoin(rule_names(o), ",");
}

std::string scenario_name(const ScenarioReport& s) {
  return std::string(conformance::scenario_info(s.kind).name);
}

// A scenario's outcome (spec/outcome.h) as the report names it; INCOMPLETE ones that did not
// run to their end say why (NOT-RUN, NOT-FINISHED).
std::string status(const ScenarioReport& s) {
  if (s.counterexample) return "FAIL";
  if (s.settings_mismatch) return "NOT-JUDGED";
  if (s.skipped_never_started) return "NOT-RUN";
  if (s.deadline_reached) return s.runs == 0 ? "NOT-RUN" : "NOT-FINISHED";
  return std::string(spec::outcome_name(s.outcome()));
}

std::size_t not_applicable_count(const ConformReport& r) {
  return static_cast<std::size_t>(std::count_if(
      r.scenarios.begin(), r.scenarios.end(),
      [](const ScenarioReport& s) { return s.outcome() == spec::Outcome::kNotApplicable; }));
}

// The verdict line: the run's outcome (docs/cli.md, "Outcomes and exit codes"), with why.
std::string verdict(const ConformReport& r) {
  const std::string na =
      not_applicable_count(r) == 0
          ? ""
          : absl::StrCat("; ", spec::count_noun(not_applicable_count(r), "scenario"),
                         " NOT-APPLICABLE to this client");
  if (r.client_could_not_start) {
    return "NOTHING-CHECKED (the client never subscribed and sent a Flow)";
  }
  if (r.settings_mismatch) {
    return absl::StrCat("CONFIGURATION-MISMATCH (", *r.settings_mismatch,
                        "; nothing judged)");
  }
  if (r.interrupted) {
    if (r.scenarios.empty()) return "INTERRUPTED (stopped by a signal before any scenario finished)";
    return absl::StrCat("INTERRUPTED (stopped by a signal; ",
                        spec::count_noun(r.scenarios.size(), "scenario"),
                        " finished before it, reported above, together ",
                        std::string(spec::outcome_name(r.outcome())), ")");
  }
  switch (r.outcome()) {
    case spec::Outcome::kPass: return absl::StrCat("PASS", na);
    case spec::Outcome::kFail: return absl::StrCat("FAIL", na);
    case spec::Outcome::kIncomplete:
      return absl::StrCat("INCOMPLETE (",
                          r.deadline_reached() ? "--deadline reached before every scenario ran"
                                               : "a scenario's window was not opened",
                          "; nothing failed", na, ")");
    case spec::Outcome::kNotApplicable: break;
  }
  return "NOTHING-CHECKED (every scenario is NOT-APPLICABLE to this client)";
}

std::vector<std::string> split_rows(std::string_view rows) {
  return absl::StrSplit(std::string(rows), ',', absl::SkipEmpty());
}

// The wire-observable legacy rows (the catalogue's `rows`), in rulebook order.
std::vector<std::string> observable_rows() {
  std::set<std::pair<int, std::string>> rows;
  for (const conformance::ScenarioInfo& s : conformance::all_scenarios()) {
    for (const std::string& row : split_rows(s.rows)) {
      int n = 0;
      (void)absl::SimpleAtoi(row.substr(1), &n);
      rows.insert({n, std::string(row)});
    }
  }
  std::vector<std::string> out;
  for (const auto& [n, row] : rows) out.push_back(row);
  return out;
}

// The rule a row's window is reported under (the scenarios that open it).
std::string scenarios_for_row(const std::string& row) {
  std::string out;
  for (const conformance::ScenarioInfo& s : conformance::all_scenarios()) {
    for (const std::string& r : split_rows(s.rows)) {
      if (r == row) absl::StrAppend(&out, out.empty() ? "" : ",", std::string(s.name));
    }
  }
  return out;
}

std::string settings_text(const RunSettings& s) {
  return absl::StrCat("--seed ", s.seed, " --idle ", s.idle_s, " --cases ", s.cases, " --q ", s.q,
                      " --threshold ", s.threshold);
}

// One scenario's line of the text report, with what it opened, restarted, missed and deviated.
void scenario_text(std::ostream& o, const ScenarioReport& s) {
  o << "  " << status(s) << " " << scenario_name(s) << "  (" << spec::count_noun(s.runs, "run")
    << ", " << spec::count_noun(s.cases_passed, "case") << " passed, "
    << absl::StrFormat("%.1f", s.seconds) << " s)";
  if (s.counterexample) o << "  rules " << rules_list(*s.counterexample);
  o << "\n";
  for (const std::string& w : s.windows) o << "       opened: " << w << "\n";
  for (const std::string& w : s.restarts) o << "       started again: " << w << "\n";
  std::set<std::string> missed(s.not_opened.begin(), s.not_opened.end());
  for (const std::string& w : missed) o << "       not opened: " << w << "\n";
  if (s.not_applicable()) {
    for (const std::string& w : s.cannot_open) o << "       not applicable: " << w << "\n";
  }
  if (!s.rows.empty()) {
    o << "       legacy rows opened: " << absl::StrJoin(s.rows, ",") << "\n";
  }
  std::set<std::string> devs;
  for (const spec::Finding& d : s.deviations) {
    devs.insert(absl::StrCat(std::string(spec::rule_name(d.rule)), ": ", d.explanation));
  }
  for (const std::string& d : devs) o << "       known deviation (not a failure) " << d << "\n";
  if (!s.never_acked.empty()) {
    o << "       never acknowledged: " << absl::StrJoin(s.never_acked, ", ") << "\n";
  }
}

// The wire-observable legacy rows, each found (by which scenarios) or not, and the others.
void legacy_rows_text(std::ostream& o, const ConformReport& r) {
  o << "\nLegacy rows (rulebook section 10) found:\n";
  const auto found = r.rows_found();
  for (const std::string& row : observable_rows()) {
    auto it = found.find(row);
    o << "  " << row << "  ";
    if (it == found.end()) o << "not found (window in " << scenarios_for_row(row) << ")\n";
    else {
      o << "found by " << absl::StrJoin(it->second, ",");
      if (auto k = conformance::parse_scenario(it->second.front())) {
        o << " (reported under " << spec::rule_name(conformance::scenario_info(*k).primary) << ")";
      }
      o << "\n";
    }
  }
  for (const conformance::UnobservableRow& u : conformance::unobservable_rows()) {
    o << "  " << u.row << "  not observable on the wire: " << u.reason << "\n";
  }
}

// A failing scenario's minimal counterexample: how it was found, shrunk and reproduced, its
// numbers and findings; with `full`, its explanation, diagram, trace and the client's output.
void counterexample_text(std::ostream& o, const ScenarioReport& s, bool full) {
  const conformance::ScenarioOutcome& c = *s.counterexample;
  o << "\n== " << scenario_name(s) << ": minimal counterexample ==\n";
  o << "first failing parameters: " << s.original << "\n";
  o << "reproduced: failed the same way in " << s.reproduced << " of " << s.reproduce_runs
    << (s.reproduce_runs == 1 ? " run" : " runs") << " of the minimal parameters"
    << (s.reproduced < s.reproduce_runs ? " (a racy failure: the client does not fail every time)"
                                        : "")
    << "\n";
  if (s.shrink_steps > 0) {
    o << "shrunk in " << s.shrink_steps << (s.shrink_steps == 1 ? " step" : " steps") << " ("
      << s.shrink_tries << " smaller " << (s.shrink_tries == 1 ? "case" : "cases")
      << " tried) to: " << conformance::describe(c.params) << "\n";
  } else if (s.shrink_tries > 0) {
    o << "not shrunk: none of the " << s.shrink_tries << " smaller "
      << (s.shrink_tries == 1 ? "case" : "cases") << " tried failed the same way; minimal: "
      << conformance::describe(c.params) << "\n";
  } else {
    o << "not shrunk (no smaller case tried); parameters: " << conformance::describe(c.params)
      << "\n";
  }
  if (!c.drain.text.empty()) o << c.drain.text << "\n";
  for (const std::string& w : c.windows) o << "opened: " << w << "\n";
  o << "wire trace: " << c.events.size() << " events; last incarnation granted "
    << c.granted << ", debited " << c.debited << ", available " << (c.granted - c.debited)
    << "; " << spec::count_noun(c.incarnations, "subscribe") << "\n";
  if (c.client_failure) o << "client: " << *c.client_failure << "\n";
  o << "findings:\n" << report::findings_text(c.violations, c.deviations);
  if (!full) return;
  const Explained e = explained(c);
  o << "\n" << render_text(e, scenario_name(s) + ".jsonl");
  o << "\n```mermaid\n" << render_mermaid(e) << "```\n";
  o << "\n" << render_jsonl(e);
  if (!c.client_log_tail.empty()) {
    o << "\nclient output (tail):\n" << c.client_log_tail << "\n";
  }
}

// One scenario of the JSON report; a failing one with its minimal counterexample and trace.
nlohmann::ordered_json scenario_json(const ScenarioReport& s) {
  using Json = nlohmann::ordered_json;
  const std::set<std::string> missed(s.not_opened.begin(), s.not_opened.end());
  Json j = {{"name", scenario_name(s)},
            {"ok", s.passed()},
            {"status", status(s)},
            {"runs", s.runs},
            {"cases_passed", s.cases_passed},
            {"seconds", s.seconds},
            {"windows", s.windows},
            {"not_opened", std::vector<std::string>(missed.begin(), missed.end())},
            {"not_applicable", s.not_applicable() ? s.cannot_open : std::vector<std::string>{}},
            {"legacy_rows", s.rows},
            {"never_acked", s.never_acked},
            {"restarts", s.restarts}};
  if (s.counterexample) {
    const conformance::ScenarioOutcome& c = *s.counterexample;
    j["rules"] = rule_names(c);
    j["original"] = s.original;
    j["minimal"] = conformance::describe(c.params);
    j["shrink_steps"] = s.shrink_steps;
    j["shrink_tries"] = s.shrink_tries;
    j["reproduced"] = s.reproduced;
    j["reproduce_runs"] = s.reproduce_runs;
    j["events"] = c.events.size();
    j["granted"] = c.granted;
    j["debited"] = c.debited;
    j["drain"] = {{"measured", c.drain.measured},
                  {"delta", c.drain.delta},
                  {"short_min", c.drain.short_min},
                  {"short_max", c.drain.short_max},
                  {"text", c.drain.text}};
    if (c.client_failure) j["client_failure"] = *c.client_failure;
    j["findings"] = Json::array();
    for (const spec::Finding& f : c.violations) j["findings"].push_back(validate::finding_object(f));
    std::ostringstream t;
    (void)trace::write_trace(t, c.header, c.events);
    j["trace"] = t.str();
  }
  std::set<std::string> devs;
  for (const spec::Finding& d : s.deviations) devs.insert(std::string(spec::rule_name(d.rule)));
  if (s.counterexample) {
    for (const spec::Finding& d : s.counterexample->deviations) {
      devs.insert(std::string(spec::rule_name(d.rule)));
    }
  }
  j["deviations"] = std::vector<std::string>(devs.begin(), devs.end());
  // Each known deviation with its numbers ("X1: b4 (P = 4) returned 1 ...: 3 permits short").
  std::set<std::string> texts;
  for (const spec::Finding& d : s.deviations) {
    texts.insert(absl::StrCat(std::string(spec::rule_name(d.rule)), ": ", d.explanation));
  }
  j["deviation_details"] = std::vector<std::string>(texts.begin(), texts.end());
  return j;
}

// The legacy rows of the JSON report: each observable one found or not, and the others.
nlohmann::ordered_json legacy_rows_json(const ConformReport& r) {
  using Json = nlohmann::ordered_json;
  Json rows = Json::array();
  const auto found = r.rows_found();
  for (const std::string& row : observable_rows()) {
    auto it = found.find(row);
    rows.push_back(
        {{"row", row},
         {"found", it != found.end()},
         {"scenarios", it == found.end() ? std::vector<std::string>{} : it->second}});
  }
  for (const conformance::UnobservableRow& u : conformance::unobservable_rows()) {
    rows.push_back(
        {{"row", std::string(u.row)}, {"observable", false}, {"reason", std::string(u.reason)}});
  }
  return rows;
}

}  // namespace

std::string format_text(const ConformReport& r, const std::string& command,
                        const RunSettings& settings, bool full) {
  std::ostringstream o;
  o << "permitcheck conform: " << command << "\n";
  o << "Judged as: " << r.applicable_rules << "\n";
  o << "Settings: " << settings_text(settled(settings, r))
    << " (these options repeat this run's cases)\n";
  o << "Q and T: " << r.settings.text() << "\n\n";
  if (r.settings_mismatch) {
    o << "CONFIGURATION MISMATCH: " << *r.settings_mismatch << ". Nothing was judged: against a "
      << "Q the client does not use, every number would be off by the difference. Run again with "
      << "the client's own --q (and --threshold), or without them to read them off its Flows.\n\n";
  }
  if (r.interrupted) {
    o << "INTERRUPTED by a signal: the report of the "
      << spec::count_noun(r.scenarios.size(), "scenario")
      << " that finished before it; the others did not finish.\n\n";
  }
  if (r.client_could_not_start) {
    o << "The client never subscribed and sent a Flow in any run: could not start.\n";
    if (r.never_started) {
      const conformance::ScenarioOutcome& c = *r.never_started;
      if (c.client_failure) o << "client: " << *c.client_failure << "\n";
      o << "client output (tail):\n"
        << (c.client_log_tail.empty() ? "(none)" : c.client_log_tail) << "\n";
    }
    o << "\n";
  }
  o << "Scenarios:\n";
  for (const ScenarioReport& s : r.scenarios) scenario_text(o, s);
  legacy_rows_text(o, r);
  o << "\nRules:\n";
  const auto by_rule = r.violations_by_rule();
  if (by_rule.empty()) o << "  no rule violated\n";
  for (const auto& [rule, scenarios] : by_rule) {
    o << "  " << rule << "  violated in";
    for (const std::string& s : scenarios) o << " " << s;
    o << "\n";
  }
  for (const ScenarioReport& s : r.scenarios) {
    if (s.counterexample) counterexample_text(o, s, full);
  }
  o << "\nverdict: " << verdict(r) << "\n";
  return o.str();
}

std::string format_json(const ConformReport& r, const std::string& command,
                        const RunSettings& settings) {
  using Json = nlohmann::ordered_json;
  Json json = {{"client", command},
               {"settings",
                {{"seed", settings.seed},
                 {"idle_seconds", settings.idle_s},
                 {"cases", settings.cases},
                 {"q", r.settings.q},
                 {"threshold", r.settings.t},
                 {"q_source", std::string(conformance::setting_source_name(r.settings.q_source))},
                 {"threshold_source",
                  std::string(conformance::setting_source_name(r.settings.t_source))}}},
               {"settings_mismatch", r.settings_mismatch ? Json(*r.settings_mismatch) : Json()},
               {"ok", r.passed()},
               {"outcome", std::string(spec::outcome_name(r.outcome()))},
               {"interrupted", r.interrupted},
               {"client_could_not_start", r.client_could_not_start},
               {"deadline_reached", r.deadline_reached()},
               {"judged_as", r.applicable_rules},
               {"scenarios", Json::array()}};
  for (const ScenarioReport& s : r.scenarios) json["scenarios"].push_back(scenario_json(s));
  json["legacy_rows"] = legacy_rows_json(r);
  return report::json_line(json);
}

// --trace-dir: each failing scenario's minimal counterexample as DIR/SCENARIO.jsonl, .mmd and
// .txt; false when one could not be written (the reason on `err`).
bool write_counterexamples(const ConformReport& report, const std::string& dir, std::ostream& out,
                           std::ostream& err) {
  for (const ScenarioReport& s : report.scenarios) {
    if (!s.counterexample) continue;
    const std::string base = dir + "/" + scenario_name(s);
    const Explained e = explained(*s.counterexample);
    if (!report::write_report(base + ".jsonl", out, render_jsonl(e), "conform", err) ||
        !report::write_report(base + ".mmd", out, render_mermaid(e), "conform", err) ||
        !report::write_report(base + ".txt", out, render_text(e, scenario_name(s) + ".jsonl"),
                              "conform", err)) {
      return false;
    }
  }
  return true;
}

std::string conform_junit(const ConformReport& r) {
  validate::JunitSuite suite{.name = "permitcheck conform", .suite = "conform"};
  for (const ScenarioReport& s : r.scenarios) {
    validate::JunitCase c{.classname = "conform", .name = scenario_name(s), .seconds = s.seconds};
    if (s.counterexample) {
      const conformance::ScenarioOutcome& o = *s.counterexample;
      std::string body;
      for (const spec::Finding& f : o.violations) absl::StrAppend(&body, spec::format_finding(f), "\n");
      c.failure = validate::JunitCase::Failure{
          "violation", absl::StrCat(rules_list(o), " in ", conformance::describe(o.params)), body};
    } else if (s.settings_mismatch) {
      c.error = validate::JunitCase::Failure{
          "not judged", r.settings_mismatch.value_or("configuration mismatch"), ""};
    } else if (s.deadline_reached) {
      c.error = validate::JunitCase::Failure{
          "not run", absl::StrCat("--deadline reached after ", spec::count_noun(s.runs, "run")),
          ""};
    } else if (s.skipped_never_started) {
      c.error = validate::JunitCase::Failure{"not run", "the client never subscribed", ""};
    } else if (s.inconclusive()) {
      c.error = validate::JunitCase::Failure{"incomplete", "no run opened the scenario's window", ""};
    } else if (s.not_applicable()) {
      absl::StrAppend(&c.system_out, "NOT-APPLICABLE: ", absl::StrJoin(s.cannot_open, "; "), "\n");
    }
    suite.cases.push_back(std::move(c));
  }
  return validate::format_junit(suite);
}

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_HAVE_CONFORMANCE
