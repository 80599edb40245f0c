#include "cli/prove_command.h"

#include <vector>

#include "cli/options.h"

namespace permitcheck::cli {

std::string_view ProveCommand::description() const {
  return "Run the Z3 checks (conservation, finalization, isolation, induction). Exit 0 all proved, "
      "1 a counterexample or an undecided check, 2 usage.";
}

std::string_view ProveCommand::examples() const {
  return "  permitcheck prove\n"
         "  permitcheck prove --ruleset legacy --check isolation --trace-dir cex";
}

void ProveCommand::add_options(CLI::App& sub) {
  sub.add_option("--ruleset", options_.ruleset, "Ruleset to prove")->capture_default_str();
  sub.add_option("--check", options_.checks, "Only these checks (repeatable)");
  sub.add_option("--bound", options_.bound, "Batch size bound B <= bound (8..65535)")
      ->capture_default_str();
  sub.add_option("--depth", options_.depth, "Unrolling depth of the isolation check")
      ->check(IntRange(1, 1000))
      ->capture_default_str();
  sub.add_option("--timeout", options_.timeout_seconds, "Seconds per solver query")
      ->check(FiniteRange(0.001, 86400.0))
      ->capture_default_str();
  sub.add_option("--rlimit", options_.rlimit,
                     "Z3 resource limit per solver query (deterministic: the verdict does not "
                     "depend on the machine's speed); 0 none")
      ->capture_default_str();
  sub.add_option("--kmax", options_.kmax, "Finalization: entries per send")
      ->check(IntRange(1, 64))
      ->capture_default_str();
  sub.add_option("--induction-k", options_.induction_k, "k of k-induction")
      ->check(IntRange(1, 16));
  sub.add_option("--induction-bound", options_.induction_bound,
                     "Induction: B of the commands inside the transition system (8..1024)")
      ->check(IntRange(8, 1024));
  sub.add_option("--trace-dir", options_.trace_dir,
                     "Write each counterexample as a trace file CHECK-RULESET-N.jsonl into DIR");
  sub.add_flag("--vacuity", options_.vacuity,
                   "Also check that every proof is not vacuous (assumptions satisfiable, false "
                   "variants refuted)");
  sub.add_flag("--progress", options_.progress,
                   "Progress line on stderr (checks done, elapsed, left) even when it is no terminal");
  sub.add_flag("--no-progress", options_.no_progress, "No progress line")
      ->excludes("--progress");
  sub.add_option("--format", options_.format, "Report format")
      ->check(CLI::IsMember(std::vector<std::string>{"text", "json", "junit"}))
      ->capture_default_str();
}

int ProveCommand::run(std::istream&, std::ostream& out, std::ostream& err) {
  return run_prove(options_, out, err);
}

}  // namespace permitcheck::cli
