#include "properties/runner.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "properties/commands.h"
#include "impl/mutant.h"
#include "properties/generators.h"
#include "rapidcheck.h"
#include "rapidcheck/state.h"
#include "base/absl_view.h"
#include "spec/monitor.h"
#include "spec/plain_text.h"
#include "trace/reader.h"
#include "trace/writer.h"

namespace permitcheck::properties {
namespace {

std::optional<long long> env_int(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  if (end == v) return std::nullopt;
  return n;
}

class CountingListener : public rc::detail::TestListener {
 public:
  explicit CountingListener(const std::function<void(int)>* on_passed) : on_passed_(on_passed) {}
  void onTestCaseFinished(const rc::detail::CaseDescription& c) override {
    if (c.result.type == rc::detail::CaseResult::Type::Success && on_passed_ != nullptr &&
        *on_passed_) {
      (*on_passed_)(++passed_);
    }
  }
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}

 private:
  const std::function<void(int)>* on_passed_;
  int passed_ = 0;
};

std::string problem_label(const Problem& p) {
  return p.rule ? absl::StrCat(p.source, " ", to_absl(spec::rule_name(*p.rule))) : p.source;
}

}  // namespace

PropertyParams PropertyParams::from_env(int default_cases) {
  PropertyParams p;
  p.cases = default_cases;
  if (const char* rc_params = std::getenv("RC_PARAMS")) {
    const std::string s(rc_params);
    const rc::detail::TestParams& tp = rc::detail::configuration().testParams;
    if (s.find("seed") != std::string::npos) p.seed = tp.seed;
    if (s.find("max_success") != std::string::npos) p.cases = tp.maxSuccess;
  }
  if (auto v = env_int("PERMITCHECK_PROPERTY_SEED")) p.seed = static_cast<std::uint64_t>(*v);
  if (auto v = env_int("PERMITCHECK_PROPERTY_CASES")) p.cases = static_cast<int>(*v);
  if (auto v = env_int("PERMITCHECK_FIND_CASES")) p.find_cases = static_cast<int>(*v);
  if (auto v = env_int("PERMITCHECK_MUTANT_CASES")) p.mutant_cases = static_cast<int>(*v);
  return p;
}

PropertyResult run_property(const PropertySpec& spec, const PropertyParams& params) {
  // RapidCheck prints its global configuration once; make it name the seed actually used.
  if (std::getenv("RC_PARAMS") == nullptr) {
    ::setenv("RC_PARAMS", absl::StrCat("seed=", params.seed).c_str(), 0);
  }
  PropertyResult out{.name = spec.name,
                     .budget = params.cases,
                     .seed = params.seed,
                     .max_steps = params.max_steps};
  std::optional<CaseRecord> last;
  const auto property = [&spec, &last] {
    const impl::WorldConfig config = *gen_world_config(spec.mode, spec.mutant);
    ModelState s0 = ModelState::of(config);
    s0.in_range_corruption = spec.in_range_corruption;
    const auto steps = *rc::state::gen::commands(s0, &gen_command);
    Harness h(config, spec.goal, spec.rules, &last);
    std::optional<CaseCoverage> coverage;
    if (spec.coverage != nullptr) h.set_coverage(&coverage.emplace(config));
    h.start();
    rc::state::runAll(steps, s0, h);
    h.finish();
    if (coverage) {
      coverage->classify();
      spec.coverage->add(*coverage);
    }
  };
  rc::detail::TestParams tp;
  tp.seed = params.seed;
  tp.maxSuccess = params.cases;
  tp.maxSize = std::max(0, params.max_steps - 1);  // commands(): at most maxSize + 1 steps
  tp.disableShrinking = !params.shrink;
  rc::detail::TestMetadata metadata;
  metadata.id = spec.name;
  metadata.description = spec.name;
  CountingListener listener(&spec.on_case_passed);

  const auto start = std::chrono::steady_clock::now();
  const rc::detail::TestResult result = rc::detail::checkTestable(property, metadata, tp, listener);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  rc::detail::SuccessResult success;
  rc::detail::FailureResult failure;
  rc::detail::GaveUpResult gave_up;
  rc::detail::Error error;
  if (result.match(success)) {
    out.passed = true;
    out.cases = success.numSuccess;
    if (spec.coverage != nullptr) spec.coverage->add_distribution(success.distribution);
  } else if (result.match(failure)) {
    out.cases = failure.numSuccess + 1;
    out.counterexample = std::move(last);
    if (!out.counterexample || failure.description.find(format_problem(out.counterexample->problem)) ==
                                   std::string::npos) {
      out.error = failure.description;  // not a harness problem: an exception escaped
    }
  } else if (result.match(gave_up)) {
    out.cases = gave_up.numSuccess;
    out.error = "gave up: " + gave_up.description;
  } else if (result.match(error)) {
    out.error = "error: " + error.description;
  }
  return out;
}

std::string format_failure(const PropertyResult& r) {
  std::string out = absl::StrCat("property \"", r.name, "\" FAILED on case ", r.cases,
                                 " (seed ", r.seed, ", up to ", r.max_steps, " steps per case, ",
                                 absl::StrFormat("%.2f", r.seconds), " s)\n");
  if (r.counterexample) {
    const CaseRecord& c = *r.counterexample;
    absl::StrAppend(&out, "  configuration: ", show_config(c.config), "\n");
    absl::StrAppend(&out, "  shrunk counterexample, ", spec::count_noun(c.steps.size(), "step"),
                    ", then the final quiescence:\n");
    for (std::size_t i = 0; i < c.steps.size(); ++i) {
      absl::StrAppend(&out, "    ", i + 1, ". ", c.steps[i], "\n");
    }
    absl::StrAppend(&out, "  found: ", format_problem(c.problem), "\n");
  }
  if (!r.error.empty()) absl::StrAppend(&out, "  rapidcheck: ", r.error, "\n");
  // The same seed and case budget regenerate the same cases (sizes follow the budget).
  absl::StrAppend(&out, "  reproduce: seed ", r.seed, " with the same budget of ", r.budget,
                  " cases (PERMITCHECK_PROPERTY_SEED=", r.seed, " PERMITCHECK_PROPERTY_CASES=",
                  r.budget, "; _FIND_CASES / _MUTANT_CASES for searches) fails again at case ",
                  r.cases, "\n");
  return out;
}

// ---- Legacy findings ----

bool write_and_recheck(const CaseRecord& record, const std::string& path, spec::RuleId rule,
                       bool deviation, std::string* recheck_text) {
  {
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    std::error_code ignored;  // a missing directory shows as the open failure below
    if (!dir.empty()) std::filesystem::create_directories(dir, ignored);
    std::ofstream out(path, std::ios::trunc);
    if (!out) {
      *recheck_text = absl::StrCat("cannot write ", path);
      return false;
    }
    // The trace first, its description after it: the header is line 1 and event i line i + 2,
    // the numbering the harness's monitor used, so the file's findings have the same lines.
    if (absl::Status s = trace::write_trace(out, record.header, record.events); !s.ok()) {
      *recheck_text = std::string(s.message());
      return false;
    }
    out << "# permitcheck counterexample: " << show_config(record.config) << "\n";
    out << "# found: " << format_problem(record.problem) << "\n";
    for (std::size_t i = 0; i < record.steps.size(); ++i) {
      out << "# step " << i + 1 << ": " << record.steps[i] << "\n";
    }
    out << "# then: final quiescence\n";
  }
  std::ifstream in(path);
  absl::StatusOr<trace::Trace> trace = trace::read_trace(in);
  if (!trace.ok()) {
    *recheck_text = absl::StrCat("cannot read back: ", trace.status().message());
    return false;
  }
  spec::Monitor monitor(trace->header);
  for (std::size_t i = 0; i < trace->events.size(); ++i) {
    monitor.on_event(trace->events[i], trace->lines[i]);
  }
  monitor.finish();
  const std::vector<spec::Finding>& findings = deviation ? monitor.deviations() : monitor.violations();
  // The same rule, and at the same line when the harness's monitor found it.
  const std::optional<std::uint64_t> line =
      record.problem.rule == rule ? record.problem.line : std::nullopt;
  for (const spec::Finding& f : findings) {
    if (f.rule == rule && (!line || f.line == *line)) {
      *recheck_text = spec::format_finding(f);
      return true;
    }
  }
  *recheck_text = findings.empty() ? "nothing reported" : spec::format_finding(findings.front());
  return false;
}

LegacyFinding find_legacy_bug(const std::string& id, const PropertyParams& params,
                              const std::string& dir) {
  LegacyFinding f{.id = id};
  // Shrinking stops in a local minimum; independent searches from other seeds often end in a
  // shorter one. The first search's case count is the "cases needed".
  for (int k = 0; k < std::max(1, params.searches); ++k) {
    PropertyParams p = params;
    p.cases = params.find_cases;
    p.seed = params.seed + static_cast<std::uint64_t>(k);
    const PropertyResult r = run_property({.name = "legacy " + id,
                                           .mode = impl::Mode::kLegacy,
                                           .rules = spec::RulesetId::kRevD,
                                           .goal = Goal::find(id)},
                                          p);
    f.seconds += r.seconds;
    if (f.searches == 0) f.cases += r.cases;  // cases run until the first find
    if (r.passed || !r.counterexample) continue;
    ++f.searches;
    const int steps = static_cast<int>(r.counterexample->steps.size());
    if (f.found && steps >= f.steps) continue;
    f.found = true;
    f.steps = steps;
    f.seed = p.seed;
    f.kept_cases = r.cases;
    f.counterexample = r.counterexample;
  }
  if (!f.found) return f;
  const CaseRecord& c = *f.counterexample;
  f.rule = c.problem.rule;
  f.deviation = c.problem.deviation;
  f.trace_file = dir + "/" + id + ".jsonl";
  f.recheck_ok = f.rule && write_and_recheck(c, f.trace_file, *f.rule, f.deviation, &f.recheck_text);
  return f;
}

std::vector<LegacyFinding> find_legacy_bugs(const PropertyParams& params, const std::string& dir) {
  std::vector<LegacyFinding> out;
  for (int i = 1; i <= 11; ++i) out.push_back(find_legacy_bug("L" + std::to_string(i), params, dir));
  return out;
}

// ---- Mutation ----

std::vector<MutantResult> run_mutation(const PropertyParams& params) {
  std::vector<MutantResult> out;
  PropertyParams p = params;
  p.cases = params.mutant_cases;
  const char* only = std::getenv("PERMITCHECK_MUTANT_FILTER");
  for (const impl::MutantInfo& m : impl::all_mutants()) {
    if (only != nullptr && *only != '\0' && m.name.find(only) == std::string_view::npos) continue;
    const PropertyResult r = run_property(
        {.name = absl::StrCat("mutant ", to_absl(m.name)), .mode = impl::Mode::kRevD, .mutant = m.id}, p);
    MutantResult res{.info = m, .killed = !r.passed, .cases = r.cases, .seconds = r.seconds};
    if (r.counterexample) {
      res.killed_by = problem_label(r.counterexample->problem);
      res.steps = static_cast<int>(r.counterexample->steps.size());
    } else if (!r.passed) {
      res.killed_by = "exception";
    }
    out.push_back(std::move(res));
  }
  return out;
}

double kill_ratio(const std::vector<MutantResult>& results) {
  if (results.empty()) return 0;
  int killed = 0;
  for (const MutantResult& r : results) killed += r.killed ? 1 : 0;
  return static_cast<double>(killed) / static_cast<double>(results.size());
}

std::string format_mutation_table(const std::vector<MutantResult>& results) {
  std::string out = absl::StrFormat("%-40s %-5s %-7s %-12s %6s %6s\n", "mutant", "rule", "killed",
                                    "killed by", "cases", "steps");
  int killed = 0;
  for (const MutantResult& r : results) {
    killed += r.killed ? 1 : 0;
    absl::StrAppend(&out, absl::StrFormat("%-40s %-5s %-7s %-12s %6d %6s\n", to_absl(r.info.name),
                                          to_absl(r.info.rule), r.killed ? "yes" : "NO",
                                          r.killed_by,
                                          r.cases, r.killed ? std::to_string(r.steps) : "-"));
  }
  absl::StrAppend(&out, absl::StrFormat("killed %d of %d (%.1f%%)\n", killed, results.size(),
                                        100.0 * kill_ratio(results)));
  return out;
}

// ---- Report ----

bool Report::ok() const {
  if (!rev_d.passed || legacy.passed || findings.size() != 11) return false;
  for (const LegacyFinding& f : findings) {
    if (!f.found || !f.recheck_ok) return false;
  }
  return !mutants_run || kill_ratio(mutants) >= 0.95;
}

std::string format_findings_table(const std::vector<LegacyFinding>& findings) {
  std::string out = absl::StrFormat("%-4s %-6s %-14s %6s %6s  %s\n", "id", "found", "rule", "steps",
                                    "cases", "trace file (re-checked)");
  for (const LegacyFinding& f : findings) {
    const std::string rule =
        f.rule ? absl::StrCat(to_absl(spec::rule_name(*f.rule)), f.deviation ? " (deviation)" : "") : "-";
    absl::StrAppend(&out, absl::StrFormat("%-4s %-6s %-14s %6s %6d  %s%s\n", f.id,
                                          f.found ? "yes" : "NO", rule,
                                          f.found ? std::to_string(f.steps) : "-", f.cases,
                                          f.trace_file.empty() ? "-" : f.trace_file,
                                          f.found ? (f.recheck_ok ? " (same rule)" : " (RE-CHECK FAILED)")
                                                  : ""));
  }
  return out;
}

std::string format_report(const Report& report) {
  std::string out;
  absl::StrAppend(&out, "== rev-d: the model-based property\n");
  if (report.rev_d.passed) {
    absl::StrAppend(&out, absl::StrFormat("PASS: %d cases of up to %d steps, seed %d, %.2f s\n",
                                          report.rev_d.cases, report.rev_d.max_steps,
                                          report.rev_d.seed, report.rev_d.seconds));
  } else {
    absl::StrAppend(&out, "FAIL: ", format_failure(report.rev_d));
  }
  absl::StrAppend(&out, "\n== legacy: the same property must fail\n");
  if (report.legacy.passed) {
    absl::StrAppend(&out, absl::StrFormat("UNEXPECTED PASS: %d cases, seed %d\n",
                                          report.legacy.cases, report.legacy.seed));
  } else {
    absl::StrAppend(&out, "fails as expected: ", format_failure(report.legacy));
  }
  absl::StrAppend(&out, "\n== legacy findings L1-L11 (rulebook section 10), checked against rev-d\n",
                  format_findings_table(report.findings));
  absl::StrAppend(&out, "\n== mutation score of the rev-d implementation\n");
  if (report.mutants_run) {
    absl::StrAppend(&out, format_mutation_table(report.mutants));
  } else {
    absl::StrAppend(&out, "not run (this build has no mutants, or --no-mutants)\n");
  }
  absl::StrAppend(&out, "\n", report.ok() ? "OK" : "NOT OK", "\n");
  return out;
}

int run_suite(const SuiteOptions& o, std::ostream& out) {
  Report report;
  report.rev_d = run_property({.name = "rev-d conformance"}, o.params);
  report.legacy = run_property({.name = "legacy conformance", .mode = impl::Mode::kLegacy}, o.params);
  if (!o.no_legacy) report.findings = find_legacy_bugs(o.params, o.out_dir);
  if (!o.no_mutants && impl::mutants_compiled_in()) {
    report.mutants = run_mutation(o.params);
    report.mutants_run = true;
  }
  out << format_report(report);
  if (o.no_legacy) return report.rev_d.passed && !report.legacy.passed ? 0 : 1;
  return report.ok() ? 0 : 1;
}

}  // namespace permitcheck::properties
