#include "cli/conform.h"

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

namespace permitcheck::cli {

std::string_view ConformCommand::description() const {
  return "Run the conformance scenarios against a real Pulsar client: a PIP-491 broker on "
      "127.0.0.1 delivers generated scenarios, records the wire trace and judges it with the "
      "monitor; failures are shrunk by re-running the client. Exit 0 pass (NOT-APPLICABLE "
      "scenarios aside), 1 a finding, 3 incomplete, 2 usage, a client that could not start or "
      "nothing checked; SIGINT/SIGTERM: the finished scenarios' report, exit 130/143 "
      "(docs/cli.md, \"Outcomes and exit codes\").";
}

std::string_view ConformCommand::examples() const {
  return "  permitcheck conform --list-clients\n"
      "  permitcheck conform --client-preset go --scenarios partial_batches\n"
      "  permitcheck conform --old-client --threshold 5 \\\n"
      "    --client 'node consumer.js {url} {topic} {subscription} {q} {delay_ms} {nack_every}'";
}

void ConformCommand::add_options(CLI::App& sub) {
  sub_ = &sub;
  sub_->add_option("--client", client_,
                   "Command line starting the client; placeholders {url} {topic} {subscription} "
                   "{q} {delay_ms} {nack_every}");
  sub_->add_option("--scenarios", scenarios_, "Comma-separated scenario names (default: all)");
  sub_->add_option("--seed", seed_,
                   "Seed of the drawn cases (the same default in matrix, check and review; the "
                   "report prints it)")
      ->capture_default_str();
  sub_->add_option("--cases", cases_,
                   "Random parameter sets per scenario, drawn after its fixed first cases")
      ->check(IntRange(0, 1000))
      ->capture_default_str();
  sub_->add_option("--jobs", jobs_, "Scenarios run side by side (each its own broker and client)")
      ->check(IntRange(1, 32))
      ->capture_default_str();
  sub_->add_option("--timeout", timeout_s_, "Seconds one client run may take")
      ->check(FiniteRange(1.0, 3600.0))
      ->capture_default_str();
  sub_->add_option("--startup", startup_s_,
                   "Seconds a client run may take to its first Flow (default 10, or the "
                   "preset's own: 30 for the Java client)")
      ->check(FiniteRange(0.1, 3600.0));
  sub_->add_option("--start-attempts", start_attempts_,
                   "Starts of one run whose client sends no Subscribe and Flow within --startup, "
                   "each with a fresh broker and client (the earlier ones are reported); only as "
                   "many as fit before --deadline")
      ->check(IntRange(1, 10))
      ->capture_default_str();
  sub_->add_option("--idle", idle_s_,
                   "Seconds of silence that count as quiescence (the same default in matrix, tap "
                   "and validate; the report prints it)")
      ->check(FiniteRange(0.1, 60.0))
      ->capture_default_str();
  sub_->add_option("--deadline", deadline_s_,
                   "Seconds the whole of conform may take: no run starts after it, the "
                   "scenarios left are reported as not run (exit 2 unless something failed)")
      ->check(FiniteRange(1.0, 7.0 * 24 * 3600))
      ->capture_default_str();
  sub_->add_option("--format", format_, "Report format")
      ->check(CLI::IsMember({"text", "json", "junit"}))
      ->capture_default_str();
  sub_->add_option("--trace-dir", trace_dir_,
                   "Write each minimal counterexample as DIR/SCENARIO.jsonl (+ .mmd, .txt)");
  sub_->add_option("-o,--output", output_, "Write the report to this file instead of stdout");
  sub_->add_option("--q", q_,
                   "Receiver queue size Q the client is told ({q}) and judged against (default "
                   "10: a preset's client uses it; --client's Q is read off its first Flow, and a "
                   "first Flow other than a given Q is a configuration mismatch, exit 2)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100000}))
      ->capture_default_str();
  sub_->add_option("--threshold", threshold_,
                   "The client's Flow threshold T: at quiescence Q - available must be below it "
                   "(default: the preset's, else read off the client's smallest replenishing "
                   "Flow, else max(1, Q/2))")
      ->check(IntRange(1, 100000));
  sub_->add_flag("--old-client", old_client_,
                 "The client does not know message_permits: judge it as field-absent (X1, X6)");
  sub_->add_option("--max-shrinks", max_shrinks_, "Client runs spent shrinking one failure")
      ->check(IntRange(0, 10000))
      ->capture_default_str();
  sub_->add_option("--reproduce", reproduce_,
                   "Runs of a failing case in all, reported as \"reproduced k of n\"; a racy "
                   "failure (k < n) has each smaller case tried up to n times while shrinking")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  sub_->add_flag("--progress", progress_,
                 "A progress line on stderr as each scenario finishes (done, elapsed, left) even "
                 "when it is no terminal");
  sub_->add_flag("--no-progress", no_progress_, "No progress line")->excludes("--progress");
  sub_->add_flag("--list", list_, "List the scenarios and exit");
  sub_->add_option("--client-preset", client_preset_,
                   "A shipped consumer NAME[@VERSION] (--list-clients) with its known settings: "
                   "old client or not, its Flow threshold")
      ->excludes("--client");
  sub_->add_option("--advertised-url", advertised_url_,
                   "pulsar://HOST:PORT the broker names in its lookup answers (default: its "
                   "own): a tap or proxy in front of it gives its address, so the client "
                   "consumes through it");
  sub_->add_flag("--list-clients", list_clients_, "List the shipped client presets and exit");
  sub_->add_flag("--catalogue", catalogue_,
                 "Run the bug catalogue (docs/bug-catalogue.md): each row found in its affected "
                 "release and passing in its fixed one (--format text|json)");
}

#ifndef PERMITCHECK_HAVE_CONFORMANCE

int ConformCommand::run(std::istream&, std::ostream&, std::ostream& err) {
  err << "permitcheck conform: not built in this configuration (needs protobuf and asio)\n";
  return spec::kExitBadInput;
}

#else

namespace {

// --advertised-url: pulsar://HOST:PORT, a host without '/', a port 1-65535 and nothing after;
// the reason otherwise. (pulsar+ssl:// is not offered: the broker speaks no TLS.)
std::optional<std::string> advertised_url_problem(std::string_view url) {
  constexpr std::string_view kScheme = "pulsar://";
  if (url.substr(0, kScheme.size()) != kScheme) return "must start with pulsar://";
  const std::string_view rest = url.substr(kScheme.size());
  const std::size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return "must be pulsar://HOST:PORT";
  const std::string_view host = rest.substr(0, colon), port = rest.substr(colon + 1);
  if (host.find_first_of("/?#@ ") != std::string_view::npos) {
    return absl::StrCat("host \"", std::string(host), "\" is not a host name or address");
  }
  int n = 0;
  if (port.empty() || port.find_first_not_of("0123456789") != std::string_view::npos ||
      !absl::SimpleAtoi(std::string(port), &n) || n < 1 || n > 65535) {
    return absl::StrCat("port \"", std::string(port), "\" is not a number in 1-65535");
  }
  return std::nullopt;
}

using conformance::ConformReport;
using conformance::ScenarioReport;

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

// The options a run's cases depend on, printed in every report so that the run can be repeated
// from its output alone (the same client, these options, the same scenarios).
struct RunSettings {
  std::uint64_t seed = kDefaultSeed;
  double idle_s = kDefaultIdleSeconds;
  int cases = 0;
  std::int64_t q = 0, threshold = 0;
};

// The settings as the report was run with: Q and T as the run settled them (given, preset or
// inferred by the flow probe).
RunSettings settled(RunSettings s, const ConformReport& r) {
  s.q = r.settings.q;
  s.threshold = r.settings.t;
  return s;
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

}  // namespace

int ConformCommand::run(std::istream&, std::ostream& out, std::ostream& err) {
  if ((list_ || list_clients_) && format_ == "junit") {
    err << "permitcheck conform: --list and --list-clients write text or json, not junit\n";
    return spec::kExitBadInput;
  }
  if (list_) return list_scenarios(out);
  if (list_clients_) return list_clients(out);
  if (catalogue_) return run_catalogue(out, err);
  return run_scenarios(out, err);
}

// --list: every scenario with its rule, legacy rows and what it does; the unobservable rows.
int ConformCommand::list_scenarios(std::ostream& out) const {
  if (format_ == "json") {
    nlohmann::json j = {{"scenarios", nlohmann::json::array()},
                        {"unobservable_rows", nlohmann::json::array()}};
    for (const conformance::ScenarioInfo& s : conformance::all_scenarios()) {
      nlohmann::json rows = nlohmann::json::array();
      for (absl::string_view r : absl::StrSplit(std::string(s.rows), ',', absl::SkipEmpty())) {
        rows.push_back(std::string(r));
      }
      j["scenarios"].push_back({{"name", std::string(s.name)},
                                {"rule", std::string(spec::rule_name(s.primary))},
                                {"legacy_rows", rows},
                                {"summary", std::string(s.summary)}});
    }
    for (const conformance::UnobservableRow& u : conformance::unobservable_rows()) {
      j["unobservable_rows"].push_back({{"row", std::string(u.row)}, {"reason", std::string(u.reason)}});
    }
    out << report::json_indented(j);
    return spec::kExitPass;
  }
  out << "scenario\trule\tlegacy rows\twhat it does\n";
  for (const conformance::ScenarioInfo& s : conformance::all_scenarios()) {
    out << s.name << "\t" << spec::rule_name(s.primary) << "\t"
        << (s.rows.empty() ? "-" : std::string(s.rows)) << "\t" << s.summary << "\n";
  }
  out << "\nLegacy rows not observable on the wire:\n";
  for (const conformance::UnobservableRow& u : conformance::unobservable_rows()) {
    out << u.row << "\t" << u.reason << "\n";
  }
  return spec::kExitPass;
}

// --list-clients: every shipped client preset with its versions and Flow threshold at --q.
int ConformCommand::list_clients(std::ostream& out) const {
  if (format_ == "json") {
    nlohmann::json j = nlohmann::json::array();
    for (const conformance::ClientPreset& p : conformance::all_client_presets()) {
      j.push_back({{"name", p.name},
                   {"version", p.default_version},
                   {"other_versions", p.other_versions},
                   {"knows_message_permits", p.knows_message_permits},
                   {"q", q_},
                   {"threshold", p.threshold(q_)},
                   {"threshold_source", p.threshold_source},
                   {"library", p.library}});
    }
    out << report::json_indented(j);
    return spec::kExitPass;
  }
  for (const conformance::ClientPreset& p : conformance::all_client_presets()) {
    out << p.name << "\t" << p.default_version;
    for (const std::string& v : p.other_versions) out << "," << v;
    out << "\t" << (p.knows_message_permits ? "new client" : "old client") << "\tT = "
        << p.threshold(q_) << " at Q = " << q_ << " (" << p.threshold_source << ")\t"
        << p.library << "\n";
  }
  return spec::kExitPass;
}

// --catalogue: each bug-catalogue row found in its affected release and passing in its fixed one.
int ConformCommand::run_catalogue(std::ostream& out, std::ostream& err) const {
  std::vector<conformance::RowResult> results;
  for (const conformance::BugRow& row : conformance::bug_catalogue()) {
    err << "conform: catalogue row " << row.id << "\n";
    results.push_back(conformance::run_bug_row(row, conformance::presets_root()));
  }
  out << (format_ == "json" ? conformance::format_catalogue_json(results)
                            : conformance::format_catalogue_text(results));
  const bool all = std::all_of(results.begin(), results.end(),
                               [](const conformance::RowResult& r) { return r.holds(); });
  return all ? spec::kExitPass : spec::kExitViolation;
}

// The run's options from the command line (a preset resolved into its command, threshold and
// startup bound); false, with the reason on `err`, when they do not make a run.
bool ConformCommand::configure(conformance::ConformOptions& options, std::ostream& err) {
  std::chrono::milliseconds startup(10000);  // until the first Flow
  std::optional<std::int64_t> preset_threshold;
  if (!client_preset_.empty()) {
    absl::StatusOr<conformance::ResolvedPreset> preset =
        conformance::resolve_preset(client_preset_, conformance::presets_root());
    if (!preset.ok()) {
      err << "permitcheck conform: --client-preset: " << preset.status().message() << "\n";
      return false;
    }
    client_ = preset->command;
    if (!preset->preset->knows_message_permits) old_client_ = true;
    preset_threshold = preset->preset->threshold(q_);
    startup = preset->preset->startup;
  }
  if (startup_s_ > 0) startup = std::chrono::milliseconds(static_cast<std::int64_t>(startup_s_ * 1000));
  if (client_.empty()) {
    err << "permitcheck conform: --client or --client-preset is required\n";
    return false;
  }
  if (client_.find("{url}") == std::string::npos) {
    err << "permitcheck conform: --client: the command has no {url} placeholder, so the client "
           "cannot find the broker\n";
    return false;
  }
  if (!advertised_url_.empty()) {
    if (std::optional<std::string> why = advertised_url_problem(advertised_url_)) {
      err << "permitcheck conform: --advertised-url \"" << advertised_url_ << "\": " << *why
          << "\n";
      return false;
    }
  }
  options.client.command = client_;
  options.client.advertised_url = advertised_url_;
  // Q and T: given; else the preset's (its run script tells the client {q}; its threshold is
  // documented); else read off the client's own Flows by the flow probe (issue 33).
  const bool preset = preset_threshold.has_value();
  options.client.q = q_;
  options.q_source = sub_->count("--q") > 0 ? conformance::SettingSource::kGiven
                                            : conformance::SettingSource::kPreset;
  options.infer_q = sub_->count("--q") == 0 && !preset;
  if (threshold_ > 0) {
    options.client.t = threshold_;
    options.t_source = conformance::SettingSource::kGiven;
  } else if (preset) {
    options.client.t = preset_threshold;
    options.t_source = conformance::SettingSource::kPreset;
  } else {
    options.infer_t = true;
  }
  options.client.knows_message_permits = !old_client_;
  options.client.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s_ * 1000));
  options.client.idle = std::chrono::milliseconds(static_cast<std::int64_t>(idle_s_ * 1000));
  options.client.startup = std::min(options.client.timeout, startup);
  options.client.start_attempts = start_attempts_;
  options.client.log_dir = trace_dir_.empty() ? std::filesystem::temp_directory_path().string()
                                               : trace_dir_;
  options.client.keep_log = !trace_dir_.empty();
  options.seed = seed_;
  options.cases = cases_;
  options.max_shrink_runs = max_shrinks_;
  options.reproduce = reproduce_;
  options.jobs = jobs_;
  options.deadline = std::chrono::milliseconds(static_cast<std::int64_t>(deadline_s_ * 1000));
  if (!scenarios_.empty()) {
    const std::vector<std::string> names = absl::StrSplit(scenarios_, ',', absl::SkipEmpty());
    for (const std::string& name : names) {
      std::optional<conformance::ScenarioKind> k = conformance::parse_scenario(name);
      if (!k) {
        err << "permitcheck conform: --scenarios: unknown scenario \"" << name
            << "\" (permitcheck conform --list names them)\n";
        return false;
      }
      options.scenarios.push_back(*k);
    }
  }
  if (!trace_dir_.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(trace_dir_, ec);
    if (ec) {
      err << "permitcheck conform: --trace-dir " << trace_dir_ << ": " << ec.message() << "\n";
      return false;
    }
  }
  return true;
}

int ConformCommand::run_scenarios(std::ostream& out, std::ostream& err) {
  conformance::ConformOptions options;
  if (!configure(options, err)) return spec::kExitBadInput;
  // SIGINT/SIGTERM: the report of every scenario finished so far, marked interrupted, then exit
  // 130/143 (conformance::set_interrupted_report); kept up to date as scenarios finish.
  const RunSettings settings{.seed = seed_, .idle_s = idle_s_, .cases = cases_};
  const auto interrupted_text = [this, settings](conformance::ConformReport so_far) {
    so_far.interrupted = true;
    if (format_ == "json") return format_json(so_far, client_, settings);
    if (format_ == "junit") return conform_junit(so_far);
    return format_text(so_far, client_, settings, /*full=*/true);
  };
  conformance::set_interrupted_report(interrupted_text(ConformReport{}), output_);
  const auto total_scenarios = static_cast<std::int64_t>(
      options.scenarios.empty() ? conformance::all_scenarios().size() : options.scenarios.size());
  ProgressLine line(err, "conform", "scenarios",
                    progress_wanted(progress_, no_progress_, stderr_is_terminal()),
                    ProgressLine::Style::kLines);
  options.on_finished = [&](const ConformReport& so_far) {
    conformance::set_interrupted_report(interrupted_text(so_far), output_);
    line.update(static_cast<std::int64_t>(so_far.scenarios.size()), total_scenarios);
  };
  const ConformReport report = conformance::run_conformance(
      options, [&err](std::string_view line) { err << "conform: " << line; });

  if (!trace_dir_.empty() && !write_counterexamples(report, trace_dir_, out, err)) {
    return spec::kExitBadInput;
  }
  std::string text;
  if (format_ == "json") text = format_json(report, client_, settings);
  else if (format_ == "junit") text = conform_junit(report);
  else text = format_text(report, client_, settings, /*full=*/true);
  if (!output_.empty()) {
    if (!report::write_report(output_, out, text, "conform", err)) return spec::kExitBadInput;
    if (format_ != "text") err << format_text(report, client_, settings, /*full=*/false);
  } else if (!report::write_report("", out, text, "conform", err)) {
    return spec::kExitBadInput;
  }
  if (report.client_could_not_start) return spec::kExitBadInput;
  if (report.settings_mismatch) {
    err << "permitcheck conform: configuration mismatch: " << *report.settings_mismatch
        << "; nothing judged\n";
    return spec::kExitBadInput;
  }
  const spec::Outcome outcome = report.outcome();
  if (outcome == spec::Outcome::kIncomplete && report.deadline_reached()) {
    err << "permitcheck conform: --deadline of " << deadline_s_
        << " s reached before every scenario ran; nothing failed in what ran\n";
  }
  if (outcome == spec::Outcome::kNotApplicable) {
    err << "permitcheck conform: nothing checked: every scenario is NOT-APPLICABLE to this "
           "client\n";
  }
  return spec::exit_code(outcome);  // 0 PASS, 1 FAIL, 3 INCOMPLETE, 2 nothing checked
}

#endif  // PERMITCHECK_HAVE_CONFORMANCE

}  // namespace permitcheck::cli
