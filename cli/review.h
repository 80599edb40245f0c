// `permitcheck review`: design review of the proposal's revisions (rulebook section 11). Runs
// every engine (the model-based properties and the Z3 checks) on two rulesets and prints what
// the later one breaks and fixes, each with a minimal counterexample; or, with --findings, the
// table of the review findings F1-F5 found in their revision and gone in rev-d.
//
//   CLI::App app;
//   ReviewCommand review(app);            // adds the "review" subcommand
//   app.parse(argc, argv);
//   if (std::optional<int> code = review.run(std::cout, std::cerr)) return *code;
//
// Exit 0: it ran and nothing unexpected (--to breaks nothing --from did not; --findings: every
// finding found by both engines in its revision and by neither in rev-d). 1: --to breaks
// something --from did not (or a finding is not where the rulebook puts it). 2: usage.
#ifndef PERMITCHECK_CLI_REVIEW_H_
#define PERMITCHECK_CLI_REVIEW_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/options.h"

namespace permitcheck::cli {

class ReviewCommand {
 public:
  explicit ReviewCommand(CLI::App& app);
  // nullopt when `review` was not the chosen subcommand.
  std::optional<int> run(std::ostream& out, std::ostream& err);

 private:
  CLI::App* sub_ = nullptr;
  std::string from_ = "rev-c";
  std::string to_ = "rev-d";
  bool findings_ = false;
  std::string format_ = "text";
  std::uint64_t seed_ = kDefaultSeed;
  int cases_ = 0;    // 0: the default search budget
  int bound_ = 64;
  std::string trace_dir_;
  std::vector<std::string> checks_;
};

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_REVIEW_H_
