#include "cli/engines.h"

#include <csignal>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "cli/progress.h"
#include "report/output.h"
#include "base/absl_view.h"
#include "spec/outcome.h"
#include "spec/ruleset.h"
#include "validate/junit.h"

#ifdef PERMITCHECK_HAVE_SOLVER
#include "solver/interrupt.h"
#include "solver/prove.h"
#ifdef PERMITCHECK_SOLVER_HAS_TRACE
#include "solver/trace_output.h"
#endif
#endif

namespace permitcheck::cli {
namespace {

// Parses --ruleset; prints the error and returns nullptr on failure.
const spec::Ruleset* ruleset_or_error(const std::string& name, std::string_view command, std::ostream& err) {
  absl::StatusOr<const spec::Ruleset*> r = spec::parse_ruleset(name);
  if (!r.ok()) {
    err << "permitcheck " << command << ": --ruleset: " << r.status().message() << "\n";
    return nullptr;
  }
  return *r;
}

}  // namespace

bool check_available() {
#ifdef PERMITCHECK_HAVE_PROPERTIES
  return true;
#else
  return false;
#endif
}

bool prove_available() {
#ifdef PERMITCHECK_HAVE_SOLVER
  return true;
#else
  return false;
#endif
}


#ifdef PERMITCHECK_HAVE_SOLVER
namespace {
std::string known_checks() {
  std::string out;
  for (solver::Check c : solver::all_checks()) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", to_absl(solver::check_name(c)));
  }
  return out;
}

// What an interrupted run had (issue 18), after the table: each check finished with its
// outcome, the one the signal interrupted, and those never started, e.g.
// "finished: finalization (proved); interrupted: conservation; not started: isolation".
std::string interruption_summary(const std::vector<solver::Check>& checks,
                                 const std::vector<solver::Result>& results) {
  std::string finished, interrupted, not_started;
  auto add = [](std::string& list, std::string_view item) {
    absl::StrAppend(&list, list.empty() ? "" : ", ", to_absl(item));
  };
  for (const solver::Result& r : results) {
    const auto* u = std::get_if<solver::Unknown>(&r.outcome);
    if (u != nullptr && u->reason.ends_with("interrupted")) {  // "conservation query: interrupted"
      add(interrupted, solver::check_name(r.check));
    } else {
      add(finished, absl::StrCat(to_absl(solver::check_name(r.check)), " (",
                                 to_absl(solver::outcome_name(r.outcome)), ")"));
    }
  }
  for (std::size_t i = results.size(); i < checks.size(); ++i) {
    add(not_started, solver::check_name(checks[i]));
  }
  auto part = [](std::string_view list) { return list.empty() ? std::string("none") : std::string(list); };
  return absl::StrCat("finished: ", part(finished), "; interrupted: ", part(interrupted),
                      "; not started: ", part(not_started));
}

// prove --format junit: one test case per check and scope, failing with its counterexample
// (or unknown result).
std::string prove_junit(const std::vector<solver::Result>& results, const spec::Ruleset& rules) {
  validate::JunitSuite suite{.name = "permitcheck prove", .suite = "prove"};
  for (const solver::Result& r : results) {
    validate::JunitCase c{.classname = absl::StrCat("permitcheck.prove.", to_absl(rules.name)),
                          .name = absl::StrCat(to_absl(solver::check_name(r.check)), " (",
                                               to_absl(solver::scope_name(r)), ") ", r.bound),
                          .seconds = r.seconds};
    if (const auto* cex = std::get_if<solver::Counterexample>(&r.outcome)) {
      std::string body;
      for (const solver::Witness& w : cex->witnesses) absl::StrAppend(&body, w.finding, "\n  ", w.words, "\n");
      c.failure = validate::JunitCase::Failure{
          "counterexample", cex->witnesses.empty() ? "counterexample" : cex->witnesses[0].finding, body};
    } else if (const auto* unk = std::get_if<solver::Unknown>(&r.outcome)) {
      c.failure = validate::JunitCase::Failure{"unknown", unk->reason, ""};
    }
    suite.cases.push_back(std::move(c));
  }
  return validate::format_junit(suite);
}

#ifdef PERMITCHECK_SOLVER_HAS_TRACE
// prove --trace-dir: each counterexample as DIR/CHECK-RULESET-N.jsonl; false when one could not
// be written (the reason on `err`).
bool write_counterexample_traces(const std::vector<solver::Result>& results,
                                 const std::string& dir, std::ostream& out, std::ostream& err) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (const solver::Result& r : results) {
    const auto* cex = std::get_if<solver::Counterexample>(&r.outcome);
    if (cex == nullptr) continue;
    for (std::size_t i = 0; i < cex->witnesses.size(); ++i) {
      const std::string path =
          absl::StrCat(dir, "/", to_absl(solver::check_name(r.check)), "-",
                       to_absl(spec::ruleset(r.ruleset).name), "-", i + 1, ".jsonl");
      std::ostringstream text;
      if (!solver::write_witness(text, cex->witnesses[i]).ok() ||
          !report::write_report(path, out, text.str(), "prove", err)) {
        return false;
      }
    }
  }
  return true;
}
#endif

}  // namespace
#endif

// --timeout: at most a day per solver query.
constexpr double kMaxProveTimeoutSeconds = 86400;

int run_prove(const ProveOptions& o, std::ostream& out, std::ostream& err) {
  const spec::Ruleset* rules = ruleset_or_error(o.ruleset, "prove", err);
  if (rules == nullptr) return spec::kExitBadInput;
  if (o.bound < 8 || o.bound > 65535) {
    err << "permitcheck prove: --bound " << o.bound << ": must be in 8..65535\n";
    return spec::kExitBadInput;
  }
  if (o.depth < 1) {
    err << "permitcheck prove: --depth " << o.depth << ": must be >= 1\n";
    return spec::kExitBadInput;
  }
  // NaN fails every comparison, so the range is written to let only finite values through.
  if (!(std::isfinite(o.timeout_seconds) && o.timeout_seconds > 0 &&
        o.timeout_seconds <= kMaxProveTimeoutSeconds)) {
    err << "permitcheck prove: --timeout " << o.timeout_seconds
        << ": must be a finite number of seconds in (0, " << kMaxProveTimeoutSeconds << "]\n";
    return spec::kExitBadInput;
  }
#ifndef PERMITCHECK_HAVE_SOLVER
  (void)out;
  err << "permitcheck prove: not built in this configuration (the solver library, solver/, "
         "was not part of this build)\n";
  return spec::kExitBadInput;
#else
  std::vector<solver::Check> checks;
  for (const std::string& name : o.checks) {
    std::optional<solver::Check> c = solver::parse_check(name);
    if (!c) {
      err << "permitcheck prove: unknown check \"" << name
          << "\" (known: " << known_checks() << ")\n";
      return spec::kExitBadInput;
    }
    checks.push_back(*c);
  }
  if (checks.empty()) checks.assign(solver::all_checks().begin(), solver::all_checks().end());
  solver::Bounds bounds;
  bounds.bmax = o.bound;
  bounds.depth = o.depth;
  bounds.kmax = o.kmax;
  if (o.induction_k > 0) bounds.induction_k = o.induction_k;
  if (o.induction_bound > 0) bounds.induction_bmax = o.induction_bound;
  bounds.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(o.timeout_seconds * 1000));
  if (o.rlimit > 0) bounds.rlimit = o.rlimit;
  std::vector<solver::Result> results;
  bool all_proved = true;
  // SIGINT/SIGTERM interrupt the running query (issue 18); what finished is reported below.
  solver::SignalStop stop;
  ProgressLine line(err, "prove", "checks",
                    progress_wanted(o.progress, o.no_progress, stderr_is_terminal()));
  const auto total = static_cast<std::int64_t>(checks.size());
  for (solver::Check c : checks) {
    if (stop.signal() != 0) break;
    line.update(static_cast<std::int64_t>(results.size()), total,
                absl::StrCat(to_absl(solver::check_name(c)), " running"));
    results.push_back(solver::prove(c, *rules, bounds));
    all_proved = all_proved && std::holds_alternative<solver::Proved>(results.back().outcome);
  }
  line.update(static_cast<std::int64_t>(results.size()), total);
  line.finish();
  if (o.format == "json") {
    out << solver::format_json(results);
  } else if (o.format == "junit") {
    out << prove_junit(results, *rules);
  } else {
    out << solver::format_table(results);
  }
  if (stop.signal() != 0) {
    out.flush();
    err << "permitcheck prove: interrupted by " << (stop.signal() == SIGINT ? "SIGINT" : "SIGTERM")
        << "; the table above has what finished and what was interrupted. "
        << interruption_summary(checks, results) << "\n";
    return 128 + stop.signal();
  }
  if (o.vacuity) {
    for (solver::Check c : checks) {
      const solver::VacuityReport v =
          solver::check_vacuity(c, spec::ruleset(spec::RulesetId::kRevD), bounds);
      all_proved = all_proved && v.ok();
      if (o.format != "text") continue;
      out << "\nvacuity of " << solver::check_name(c) << " (rev-d): " << (v.ok() ? "ok" : "FAILED") << "\n";
      for (const solver::VacuityItem& i : v.items) {
        out << "  " << (i.ok ? "ok  " : "FAIL") << " " << i.what
            << (i.note.empty() ? "" : " (" + i.note + ")") << "\n";
      }
    }
  }
#ifdef PERMITCHECK_SOLVER_HAS_TRACE
  if (!o.trace_dir.empty() && !write_counterexample_traces(results, o.trace_dir, out, err)) {
    return spec::kExitBadInput;
  }
#else
  if (!o.trace_dir.empty()) {
    err << "permitcheck prove: --trace-dir needs the trace module, absent in this build\n";
    return spec::kExitBadInput;
  }
#endif
  return all_proved ? spec::kExitPass : spec::kExitViolation;
#endif
}

}  // namespace permitcheck::cli
