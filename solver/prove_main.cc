// permitcheck-prove: the solver's main job. Runs every check for rev-d (expected: proved) and
// legacy (expected: counterexamples) and prints the table: check, ruleset, bound, result,
// seconds. Exit codes: 0 every result as expected (and, with --vacuity, every proof trusted),
// 1 a violation or unexpected result, 2 usage.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "solver/interrupt.h"
#include "solver/prove.h"
#include "spec/outcome.h"
#ifdef PERMITCHECK_SOLVER_HAS_TRACE
#include "solver/trace_output.h"
#endif

namespace {

// Exit codes: spec/outcome.h (docs/cli.md, "Outcomes and exit codes").
constexpr int kPass = permitcheck::spec::kExitPass;
constexpr int kViolation = permitcheck::spec::kExitViolation;
constexpr int kUsage = permitcheck::spec::kExitBadInput;

using permitcheck::solver::Bounds;
using permitcheck::solver::Check;
using permitcheck::solver::Result;

}  // namespace

int main(int argc, char** argv) {
  namespace solver = permitcheck::solver;
  namespace spec = permitcheck::spec;
  CLI::App app{
      "permitcheck-prove: Z3 proofs of the PIP-491 permit invariants, with counterexamples as "
      "traces.\nRuns every check for rev-d (expected: proved) and legacy (expected: "
      "counterexamples re-checked by the monitor against rev-d).\nExit codes: 0 all as "
      "expected, 1 a violation or unexpected result, 2 usage.",
      "permitcheck-prove"};
  Bounds bounds;
  int timeout_ms = static_cast<int>(bounds.timeout.count());
  unsigned rlimit = 0;
  std::string format = "text";
  std::vector<std::string> checks;
  std::vector<std::string> rulesets;
  std::string trace_dir;
  bool vacuity = false;
  app.add_option("--bound", bounds.bmax, "Bmax: conservation and finalization ack_set bits (8..65535)")
      ->check(CLI::Range(8, 65535))
      ->capture_default_str();
  app.add_option("--kmax", bounds.kmax, "Finalization: entries per send")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--depth", bounds.depth, "Isolation unrolling depth; induction counterexample depth")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--induction-k", bounds.induction_k, "k of k-induction")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  app.add_option("--induction-bound", bounds.induction_bmax,
                 "Induction: B of the commands inside the transition system")
      ->check(CLI::Range(8, 1024))
      ->capture_default_str();
  app.add_option("--timeout", timeout_ms, "Per-query timeout in milliseconds (a query that hits "
                                          "it answers unknown, never proved)")
      ->check(CLI::Range(1, 86400000))
      ->capture_default_str();
  app.add_option("--rlimit", rlimit, "Z3 resource limit per query (deterministic: the verdict "
                                     "does not depend on the machine's speed); 0 none")
      ->capture_default_str();
  app.add_option("--format", format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  std::vector<std::string> check_names;
  for (Check c : solver::all_checks()) check_names.emplace_back(solver::check_name(c));
  app.add_option("--check", checks, "Only these checks (" + absl::StrJoin(check_names, ", ") +
                                        "); repeatable")
      ->check(CLI::IsMember(check_names));
  app.add_option("--ruleset", rulesets,
                 "Only these rulesets (legacy, rev-a, rev-b, rev-c, rev-d); repeatable")
      ->check(CLI::IsMember({"legacy", "rev-a", "rev-b", "rev-c", "rev-d"}));
  app.add_option("--trace-dir", trace_dir,
                 "Write each counterexample as a trace file CHECK-RULESET-N.jsonl into DIR");
  app.add_flag("--vacuity", vacuity,
               "Also check that every proof is not vacuous (assumptions satisfiable, false "
               "variants refuted)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kPass : kUsage;  // --help exits 0
  }
  bounds.timeout = std::chrono::milliseconds(timeout_ms);
  if (rlimit > 0) bounds.rlimit = rlimit;
  if (checks.empty()) {
    for (Check c : solver::all_checks()) checks.emplace_back(solver::check_name(c));
  }
  if (rulesets.empty()) rulesets = {"rev-d", "legacy"};
#ifndef PERMITCHECK_SOLVER_HAS_TRACE
  if (!trace_dir.empty()) {
    std::cerr << "permitcheck-prove: --trace-dir needs the trace module, absent in this build\n";
    return kUsage;
  }
#endif

  // SIGINT/SIGTERM interrupt the running query; the results so far are reported, exit 128+sig.
  solver::SignalStop stop;
  std::vector<Result> results;
  bool ok = true;
  for (const std::string& c : checks) {
    for (const std::string& r : rulesets) {
      if (stop.signal() != 0) break;
      const spec::Ruleset& rules = **spec::parse_ruleset(r);
      Result result = solver::prove(*solver::parse_check(c), rules, bounds);
      ok = ok && solver::as_expected(result);
      if (format == "text") std::cerr << "permitcheck-prove: " << c << " " << r << " done\n";
      results.push_back(std::move(result));
    }
  }
  std::cout << (format == "json" ? solver::format_json(results) : solver::format_table(results));
  if (stop.signal() != 0) {
    std::cout.flush();
    std::cerr << "permitcheck-prove: interrupted by signal " << stop.signal()
              << "; the results above are those finished or interrupted\n";
    return 128 + stop.signal();
  }

  if (vacuity) {
    for (const std::string& c : checks) {
      const solver::VacuityReport v = solver::check_vacuity(
          *solver::parse_check(c), spec::ruleset(spec::RulesetId::kRevD), bounds);
      ok = ok && v.ok();
      if (format == "text") {
        std::cout << "\nvacuity of " << c << " (rev-d): " << (v.ok() ? "ok" : "FAILED") << "\n";
        for (const solver::VacuityItem& i : v.items) {
          std::cout << "  " << (i.ok ? "ok  " : "FAIL") << " " << i.what
                    << (i.note.empty() ? "" : " (" + i.note + ")") << "\n";
        }
      }
    }
  }

#ifdef PERMITCHECK_SOLVER_HAS_TRACE
  if (!trace_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(trace_dir, ec);
    for (const Result& r : results) {
      const auto* cex = std::get_if<solver::Counterexample>(&r.outcome);
      if (cex == nullptr) continue;
      for (std::size_t i = 0; i < cex->witnesses.size(); ++i) {
        const std::string path =
            absl::StrCat(trace_dir, "/", std::string(solver::check_name(r.check)), "-",
                         std::string(spec::ruleset(r.ruleset).name), "-", i + 1, ".jsonl");
        std::ofstream f(path);
        if (!f || !solver::write_witness(f, cex->witnesses[i]).ok()) {
          std::cerr << "permitcheck-prove: cannot write " << path << "\n";
          return kUsage;
        }
      }
    }
  }
#endif
  return ok ? kPass : kViolation;
}
