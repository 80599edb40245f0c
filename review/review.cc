#include "review/review.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "impl/config.h"
#include "properties/generators.h"
#include "solver/trace_output.h"
#include "spec/monitor.h"
#include "spec/plain_text.h"
#include "trace/reader.h"
#include "trace/writer.h"

namespace permitcheck::review {
namespace {

// Debian's abseil keeps its own absl::string_view, which absl::StrCat needs.
std::string str(std::string_view s) { return std::string(s); }

std::string rules_name(spec::RulesetId id) { return str(spec::ruleset(id).name); }

constexpr std::array<ReviewFinding, 5> kFindings = {{
    {"F1", spec::RulesetId::kRevB, "double return",
     "duplicate non-batched P=1 returns 2; dead-letter non-batched 2; non-final chunk 2 per "
     "chunk; crypto DISCARD of a complete batch P=B=8 returns 16",
     solver::Check::kConservation},
    {"F2", spec::RulesetId::kRevB, "incomplete dispatcher list",
     "Key_Shared, two entries of P=10, draining rejects one: consumer debited 10, sticky-key "
     "aggregate 20",
     solver::Check::kFinalization},
    {"F3", spec::RulesetId::kRevB, "dead-letter release",
     "a dead-letter message is released while dead-letter handling still holds it (use after "
     "release)",
     solver::Check::kConservation},
    {"F4", spec::RulesetId::kRevC, "disconnect widened",
     "an inconsistent command closes the pooled connection; unrelated consumers on it lose "
     "their incarnations",
     solver::Check::kConservation},
    {"F5", spec::RulesetId::kRevA, "connection-scoped credit",
     "same-connection recreation: an old return is credited to the new incarnation (L7)",
     solver::Check::kIsolation},
}};

using trace::json_string;

std::string file_name(const Search& s) {
  return absl::StrCat(s.finding, "-", rules_name(s.ruleset), "-", str(engine_name(s.engine)),
                      ".jsonl");
}

// Reads a trace file back and checks it with a fresh monitor: true when `rule` is reported.
bool recheck_file(const std::string& path, spec::RuleId rule, std::string* text) {
  std::ifstream in(path);
  absl::StatusOr<trace::Trace> t = trace::read_trace(in);
  if (!t.ok()) {
    *text = absl::StrCat("cannot read back: ", t.status().message());
    return false;
  }
  spec::Monitor m(t->header);
  for (std::size_t i = 0; i < t->events.size(); ++i) m.on_event(t->events[i], t->lines[i]);
  m.finish();
  for (const spec::Finding& f : m.violations()) {
    if (f.rule == rule) return true;
  }
  *text = m.violations().empty() ? "nothing reported" : spec::format_finding(m.violations().front());
  return false;
}

std::string cases_or_seconds(const Search& s) {
  if (s.engine == Engine::kSolver) return absl::StrFormat("%.2f s", s.seconds);
  return absl::StrFormat("%d cases", s.cases);
}

std::string length_cell(const Search& s) {
  if (!s.found) return "-";
  return absl::StrCat(s.length, s.engine == Engine::kSolver ? " events" : " steps");
}

}  // namespace

std::span<const ReviewFinding> review_findings() { return kFindings; }

const ReviewFinding* find_review_finding(std::string_view id) {
  for (const ReviewFinding& f : kFindings) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

std::string_view engine_name(Engine engine) {
  return engine == Engine::kProperties ? "properties" : "solver";
}

Options Options::defaults(bool sanitized) {
  Options o;
  o.params = properties::PropertyParams::from_env(/*default_cases=*/200);
  // Without a PERMITCHECK_FIND_CASES override: enough to find each finding in its revision;
  // in rev-d the whole budget runs and finds nothing.
  if (std::getenv("PERMITCHECK_FIND_CASES") == nullptr) o.params.find_cases = sanitized ? 400 : 1500;
  o.searches = sanitized ? 1 : 2;
  return o;
}

Search search_properties(const ReviewFinding& finding, spec::RulesetId ruleset, const Options& o) {
  Search out{.finding = str(finding.id), .ruleset = ruleset, .engine = Engine::kProperties};
  std::optional<properties::CaseRecord> best;
  for (int k = 0; k < std::max(1, o.searches); ++k) {
    properties::PropertyParams p = o.params;
    p.cases = o.params.find_cases;
    p.seed = o.params.seed + static_cast<std::uint64_t>(k);
    const properties::PropertyResult r = properties::run_property(
        {.name = absl::StrCat(str(finding.id), " in ", rules_name(ruleset)),
         .mode = impl::mode_of(ruleset),
         .rules = spec::RulesetId::kRevD,  // judged by the final rules
         .goal = properties::Goal::find(str(finding.id)),
         .in_range_corruption = true},
        p);
    out.seconds += r.seconds;
    if (!out.found) out.cases += r.cases;  // cases run until the first find
    if (!r.error.empty() && out.note.empty()) out.note = r.error;
    if (r.passed || !r.counterexample) continue;
    if (best && r.counterexample->steps.size() >= best->steps.size()) continue;
    out.found = true;
    best = r.counterexample;
  }
  if (!best) return out;
  out.length = static_cast<int>(best->steps.size());
  out.rule = best->problem.rule;
  out.finding_text = best->problem.text;
  out.counterexample = absl::StrCat(properties::show_config(best->config), "; ",
                                    best->steps.empty() ? "set-up only"
                                                        : absl::StrJoin(best->steps, "; "),
                                    "; then the final quiescence");
  if (!o.trace_dir.empty() && out.rule) {
    out.trace_file = (std::filesystem::path(o.trace_dir) / file_name(out)).string();
    std::string text;
    out.recheck_ok = properties::write_and_recheck(*best, out.trace_file, *out.rule, false, &text);
    if (!out.recheck_ok) out.note = absl::StrCat("re-check: ", text);
  }
  return out;
}

Search search_solver(const ReviewFinding& finding, const solver::Result& result, const Options& o) {
  Search out{.finding = str(finding.id), .ruleset = result.ruleset, .engine = Engine::kSolver,
             .seconds = result.seconds};
  if (const auto* u = std::get_if<solver::Unknown>(&result.outcome)) {
    out.note = absl::StrCat("unknown: ", u->reason);
    return out;
  }
  const auto* c = std::get_if<solver::Counterexample>(&result.outcome);
  if (c == nullptr) return out;
  for (const solver::Witness& w : c->witnesses) {
    if (w.id != finding.id) continue;
    // Several witnesses may name the finding (F1: four direct-return paths): keep them all in
    // words, the shortest as the counterexample.
    if (out.found) {
      absl::StrAppend(&out.counterexample, " | ", w.words);
      if (static_cast<int>(w.events.size()) >= out.length) continue;
    } else {
      out.counterexample = w.words;
    }
    out.found = true;
    out.length = static_cast<int>(w.events.size());
    out.rule = w.rule;
    out.finding_text = w.finding;
    if (!o.trace_dir.empty()) {
      std::error_code ignored;
      std::filesystem::create_directories(o.trace_dir, ignored);
      out.trace_file = (std::filesystem::path(o.trace_dir) / file_name(out)).string();
      std::string text = "cannot write the trace file";
      bool written = false;
      {
        std::ofstream f(out.trace_file, std::ios::trunc);
        written = solver::write_witness(f, w).ok();
      }
      out.recheck_ok = written && recheck_file(out.trace_file, w.rule, &text);
      if (!out.recheck_ok) out.note = absl::StrCat("re-check: ", text);
    }
  }
  return out;
}

namespace {

// prove() results, each check and ruleset run once.
class SolverCache {
 public:
  explicit SolverCache(const solver::Bounds& bounds) : bounds_(bounds) {}
  const solver::Result& get(solver::Check check, spec::RulesetId id) {
    const auto key = std::make_pair(check, id);
    auto it = results_.find(key);
    if (it == results_.end()) {
      it = results_.emplace(key, solver::prove(check, spec::ruleset(id), bounds_)).first;
    }
    return it->second;
  }

 private:
  solver::Bounds bounds_;
  std::map<std::pair<solver::Check, spec::RulesetId>, solver::Result> results_;
};

}  // namespace

std::vector<Search> findings_table(const Options& o) {
  SolverCache solver(o.bounds);
  std::vector<Search> out;
  for (const ReviewFinding& f : kFindings) {
    for (spec::RulesetId id : {f.revision, spec::RulesetId::kRevD}) {
      out.push_back(search_properties(f, id, o));
      out.push_back(search_solver(f, solver.get(f.check, id), o));
    }
  }
  return out;
}

bool findings_as_expected(const std::vector<Search>& table) {
  if (table.empty()) return false;
  for (const Search& s : table) {
    const ReviewFinding* f = find_review_finding(s.finding);
    if (f == nullptr) return false;
    const bool want = s.ruleset == f->revision;
    if (s.found != want) return false;
    if (s.found && !s.trace_file.empty() && !s.recheck_ok) return false;
    if (!s.found && s.engine == Engine::kSolver && !s.note.empty()) return false;  // unknown
  }
  return true;
}

std::string format_findings_table(const std::vector<Search>& table) {
  std::string out = absl::StrFormat("%-7s %-8s %-10s %-5s %13s %9s  %-4s %s\n", "finding", "revision",
                                    "engine", "found", "cases/seconds", "length", "rule",
                                    "expected");
  for (const Search& s : table) {
    const ReviewFinding* f = find_review_finding(s.finding);
    const bool expected = f != nullptr && s.found == (s.ruleset == f->revision);
    absl::StrAppend(&out, absl::StrFormat("%-7s %-8s %-10s %-5s %13s %9s  %-4s %s\n", s.finding,
                                          rules_name(s.ruleset), str(engine_name(s.engine)),
                                          s.found ? "yes" : "no", cases_or_seconds(s),
                                          length_cell(s),
                                          s.rule ? str(spec::rule_name(*s.rule)) : "-",
                                          expected ? "yes" : "NO"));
  }
  absl::StrAppend(&out, "\nCounterexamples (checked against rev-d):\n");
  for (const Search& s : table) {
    if (!s.found) continue;
    absl::StrAppend(&out, "  ", s.finding, " ", rules_name(s.ruleset), " ",
                    str(engine_name(s.engine)), ": ", s.counterexample, "\n    ", s.finding_text,
                    "\n");
    if (!s.trace_file.empty()) {
      absl::StrAppend(&out, "    trace ", s.trace_file,
                      s.recheck_ok ? " (re-checked: same rule)" : " (RE-CHECK FAILED)", "\n");
    }
  }
  for (const Search& s : table) {
    if (!s.note.empty()) {
      absl::StrAppend(&out, "  note ", s.finding, " ", rules_name(s.ruleset), " ",
                      str(engine_name(s.engine)), ": ", s.note, "\n");
    }
  }
  absl::StrAppend(&out, "\nverdict: ",
                  findings_as_expected(table)
                      ? "PASS (every finding found by both engines in its revision, by neither "
                        "in rev-d)"
                      : "FAIL",
                  "\n");
  return out;
}

std::string format_findings_json(const std::vector<Search>& table) {
  std::string out = absl::StrCat("{\"ok\": ", findings_as_expected(table) ? "true" : "false",
                                 ", \"findings\": [");
  for (std::size_t i = 0; i < table.size(); ++i) {
    const Search& s = table[i];
    absl::StrAppend(&out, i == 0 ? "\n" : ",\n", "  {\"finding\": ", json_string(s.finding),
                    ", \"revision\": ", json_string(rules_name(s.ruleset)),
                    ", \"engine\": ", json_string(engine_name(s.engine)),
                    ", \"found\": ", s.found ? "true" : "false", ", \"cases\": ", s.cases,
                    ", \"seconds\": ", absl::StrFormat("%.3f", s.seconds),
                    ", \"length\": ", s.length,
                    ", \"rule\": ", s.rule ? json_string(spec::rule_name(*s.rule)) : "null",
                    ", \"counterexample\": ", json_string(s.counterexample),
                    ", \"monitor\": ", json_string(s.finding_text),
                    ", \"trace_file\": ", json_string(s.trace_file),
                    ", \"recheck_ok\": ", s.recheck_ok ? "true" : "false",
                    ", \"note\": ", json_string(s.note), "}");
  }
  absl::StrAppend(&out, "\n]}\n");
  return out;
}

// ---- Comparison ----

RulesetReview review_ruleset(spec::RulesetId ruleset, const Options& o) {
  RulesetReview r{.ruleset = ruleset};
  for (solver::Check check : solver::all_checks()) {
    const bool wanted = std::find(o.checks.begin(), o.checks.end(), check) != o.checks.end();
    bool a_findings_check = false;
    for (const ReviewFinding& f : kFindings) a_findings_check = a_findings_check || f.check == check;
    if (!wanted && !a_findings_check) continue;
    r.checks.push_back(solver::prove(check, spec::ruleset(ruleset), o.bounds));
  }
  for (const ReviewFinding& f : kFindings) {
    r.findings.push_back(search_properties(f, ruleset, o));
    for (const solver::Result& res : r.checks) {
      if (res.check == f.check) r.findings.push_back(search_solver(f, res, o));
    }
  }
  return r;
}

namespace {

// Every problem a ruleset shows, by key.
std::map<std::string, Change> problems_of(const RulesetReview& r, std::vector<std::string>* notes) {
  std::map<std::string, Change> out;
  for (const Search& s : r.findings) {
    if (!s.note.empty()) {
      notes->push_back(absl::StrCat(rules_name(r.ruleset), " ", s.finding, " ",
                                    str(engine_name(s.engine)), ": ", s.note));
    }
    if (!s.found) continue;
    Change& c = out[s.finding];
    c.key = s.finding;
    c.engines = c.engines.empty() ? str(engine_name(s.engine))
                                  : absl::StrCat(c.engines, "+", str(engine_name(s.engine)));
    // The solver's witness is the smaller one to read; the properties' shows the system.
    if (c.example.empty() || s.engine == Engine::kSolver) {
      c.example = absl::StrCat(s.counterexample, " [", str(engine_name(s.engine)), ", ",
                               length_cell(s), "]");
    }
    if (s.rule) c.rule = str(spec::rule_name(*s.rule));
  }
  for (const solver::Result& res : r.checks) {
    if (const auto* u = std::get_if<solver::Unknown>(&res.outcome)) {
      notes->push_back(absl::StrCat(rules_name(r.ruleset), " ", str(solver::check_name(res.check)),
                                    ": unknown: ", u->reason));
    }
    const auto* c = std::get_if<solver::Counterexample>(&res.outcome);
    if (c == nullptr) continue;
    for (const solver::Witness& w : c->witnesses) {
      if (find_review_finding(w.id) != nullptr) continue;  // counted with the findings
      const std::string key = absl::StrCat(str(solver::check_name(res.check)), ": ",
                                           w.id.empty() ? "" : absl::StrCat(w.id, " "), w.situation);
      Change& ch = out[key];
      if (!ch.key.empty()) continue;
      ch = Change{.key = key, .engines = "solver",
                  .example = absl::StrCat(w.words, " [solver, ", w.events.size(), " events]"),
                  .rule = str(spec::rule_name(w.rule))};
    }
  }
  return out;
}

void append_changes(std::string* out, std::string_view title, const std::vector<Change>& changes) {
  absl::StrAppend(out, str(title), " (", changes.size(), "):\n");
  if (changes.empty()) absl::StrAppend(out, "  none\n");
  for (const Change& c : changes) {
    absl::StrAppend(out, "  ", c.key, " [", c.rule, "; ", c.engines, "]\n    ", c.example, "\n");
  }
}

void append_changes_json(std::string* out, std::string_view name, const std::vector<Change>& changes) {
  absl::StrAppend(out, json_string(name), ": [");
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const Change& c = changes[i];
    absl::StrAppend(out, i == 0 ? "" : ", ", "{\"key\": ", json_string(c.key),
                    ", \"rule\": ", json_string(c.rule), ", \"engines\": ", json_string(c.engines),
                    ", \"counterexample\": ", json_string(c.example), "}");
  }
  absl::StrAppend(out, "]");
}

std::string check_cell(const solver::Result& r) {
  if (const auto* c = std::get_if<solver::Counterexample>(&r.outcome)) {
    return absl::StrCat("counterexample (", c->witnesses.size(), ")");
  }
  return str(solver::outcome_name(r.outcome));
}

}  // namespace

Comparison compare(spec::RulesetId from, spec::RulesetId to, const Options& o) {
  Comparison c{.from = review_ruleset(from, o), .to = review_ruleset(to, o)};
  const std::map<std::string, Change> before = problems_of(c.from, &c.notes);
  const std::map<std::string, Change> after = problems_of(c.to, &c.notes);
  for (const auto& [key, change] : after) {
    (before.contains(key) ? c.kept : c.breaks).push_back(change);
  }
  for (const auto& [key, change] : before) {
    if (!after.contains(key)) c.fixes.push_back(change);
  }
  return c;
}

std::string format_comparison(const Comparison& c) {
  const std::string from = rules_name(c.from.ruleset);
  const std::string to = rules_name(c.to.ruleset);
  std::string out = absl::StrCat("Review ", from, " -> ", to,
                                 ": every engine on both rulesets, judged by rev-d.\n\n");
  absl::StrAppend(&out, absl::StrFormat("%-13s %-24s %-24s\n", "solver check", from, to));
  for (std::size_t i = 0; i < c.from.checks.size() && i < c.to.checks.size(); ++i) {  // same order
    absl::StrAppend(&out, absl::StrFormat("%-13s %-24s %-24s\n",
                                          str(solver::check_name(c.from.checks[i].check)),
                                          check_cell(c.from.checks[i]), check_cell(c.to.checks[i])));
  }
  absl::StrAppend(&out, absl::StrFormat("\n%-7s %-28s %-18s %-18s\n", "finding", "title", from, to));
  for (const ReviewFinding& f : review_findings()) {
    auto cell = [&f](const RulesetReview& r) {
      std::vector<std::string> by;
      for (const Search& s : r.findings) {
        if (s.finding == f.id && s.found) by.push_back(str(engine_name(s.engine)));
      }
      return by.empty() ? std::string("-") : absl::StrJoin(by, "+");
    };
    absl::StrAppend(&out, absl::StrFormat("%-7s %-28s %-18s %-18s\n", str(f.id), str(f.title),
                                          cell(c.from), cell(c.to)));
  }
  absl::StrAppend(&out, "\n");
  append_changes(&out, absl::StrCat(to, " breaks"), c.breaks);
  append_changes(&out, absl::StrCat(to, " fixes"), c.fixes);
  append_changes(&out, "both have", c.kept);
  for (const std::string& n : c.notes) absl::StrAppend(&out, "note: ", n, "\n");
  absl::StrAppend(&out, "\nverdict: ",
                  c.regressed() ? absl::StrCat(to, " breaks ",
                                               spec::count_noun(c.breaks.size(), "thing"), " ",
                                               from, " did not")
                                : absl::StrCat(to, " breaks nothing ", from, " did not"),
                  "\n");
  return out;
}

std::string format_comparison_json(const Comparison& c) {
  std::string out = absl::StrCat("{\"from\": ", json_string(rules_name(c.from.ruleset)),
                                 ", \"to\": ", json_string(rules_name(c.to.ruleset)),
                                 ", \"regressed\": ", c.regressed() ? "true" : "false", ",\n ");
  append_changes_json(&out, "breaks", c.breaks);
  absl::StrAppend(&out, ",\n ");
  append_changes_json(&out, "fixes", c.fixes);
  absl::StrAppend(&out, ",\n ");
  append_changes_json(&out, "kept", c.kept);
  absl::StrAppend(&out, ",\n \"checks\": [");
  bool first = true;
  for (const RulesetReview* r : {&c.from, &c.to}) {
    for (const solver::Result& res : r->checks) {
      absl::StrAppend(&out, first ? "" : ", ", "{\"ruleset\": ", json_string(rules_name(r->ruleset)),
                      ", \"check\": ", json_string(solver::check_name(res.check)),
                      ", \"result\": ", json_string(solver::outcome_name(res.outcome)),
                      ", \"seconds\": ", absl::StrFormat("%.3f", res.seconds), "}");
      first = false;
    }
  }
  absl::StrAppend(&out, "],\n \"findings\": [");
  first = true;
  for (const RulesetReview* r : {&c.from, &c.to}) {
    for (const Search& s : r->findings) {
      absl::StrAppend(&out, first ? "" : ", ", "{\"ruleset\": ", json_string(rules_name(r->ruleset)),
                      ", \"finding\": ", json_string(s.finding),
                      ", \"engine\": ", json_string(engine_name(s.engine)),
                      ", \"found\": ", s.found ? "true" : "false", "}");
      first = false;
    }
  }
  absl::StrAppend(&out, "],\n \"notes\": [");
  for (std::size_t i = 0; i < c.notes.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "" : ", ", json_string(c.notes[i]));
  }
  absl::StrAppend(&out, "]}\n");
  return out;
}

}  // namespace permitcheck::review
