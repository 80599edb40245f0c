// The engines behind `permitcheck check` (the RapidCheck properties, properties/runner.h;
// run_check is in cli/check.cc, with the subcommand and its --suite) and
// `permitcheck prove` (the Z3 checks, solver/prove.h). Each is compiled in only when its
// library is part of the build (PERMITCHECK_HAVE_PROPERTIES, PERMITCHECK_HAVE_SOLVER); without
// it the subcommand parses its options and exits 2 with "not built in this configuration".
//
//   CheckOptions o{.ruleset = "rev-d", .cases = 1000, .seed = 491};
//   int code = run_check(o, std::cout, std::cerr);   // 0 holds, 1 counterexample, 2 usage
#ifndef PERMITCHECK_CLI_ENGINES_H_
#define PERMITCHECK_CLI_ENGINES_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/options.h"

namespace permitcheck::cli {

struct CheckOptions {
  std::string ruleset = "rev-d";  // the behaviour the reference implementation runs
  std::string against = "rev-d";  // the rules the monitor and the model check it by
  std::string counterexample;     // when set, a failure's shrunk trace is written here
  // The default budget: within it the plain check finds rev-a's and rev-c's review findings
  // (F5, F4) and one of rev-b's (F1, F2) at each seed tests/cli/exit_code_test.cc pins (1-20).
  int cases = 1000;
  std::uint64_t seed = kDefaultSeed;
  int steps = 50;                 // steps per case
  int shard_index = 0;            // --shard i/n: this process runs shard i of n
  int shard_count = 1;
  std::string format = "text";    // text, json, junit
  // Also report coverage: decision points and rules reached, generator distributions; a
  // decision point or rule no case reached makes the run exit 1.
  bool coverage = false;
  bool progress = false;     // --progress: the progress line even when stderr is no terminal
  bool no_progress = false;  // --no-progress: never
};

// `--ruleset legacy` (against rev-d, the default) runs Pulsar's legacy behaviour and expects
// the rev-d invariant to fail: exit 1 with the shrunk counterexample. `--against legacy` with
// `--ruleset legacy` is the fidelity check (the legacy implementation matches the legacy rules).
// Shard i of n runs its share of the cases with seed `seed + i`, so n machines together run
// `cases` distinct cases and any shard reproduces alone.
int run_check(const CheckOptions& options, std::ostream& out, std::ostream& err);

struct ProveOptions {
  std::string ruleset = "rev-d";
  std::vector<std::string> checks;  // empty: all four
  int bound = 64;                   // B <= bound (conservation, finalization)
  int depth = 12;                   // isolation unrolling depth
  double timeout_seconds = 60;      // per solver query
  unsigned rlimit = 0;              // Z3 resource limit per solver query, deterministic (0: none)
  int kmax = 4;                     // finalization: entries per send
  int induction_k = 0;              // k of k-induction (0: the solver's default)
  int induction_bound = 0;          // induction: B inside the transition system (0: default)
  std::string trace_dir;            // write each counterexample as CHECK-RULESET-N.jsonl here
  bool vacuity = false;             // also check that no proof is vacuous (rev-d)
  std::string format = "text";
  bool progress = false;     // --progress: the progress line even when stderr is no terminal
  bool no_progress = false;  // --no-progress: never
};

// 0 every check proved, 1 a counterexample (or a check that could not be decided), 2 usage.
int run_prove(const ProveOptions& options, std::ostream& out, std::ostream& err);

// Whether each engine is compiled into this binary.
bool check_available();
bool prove_available();

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_ENGINES_H_
