// `permitcheck review`: design review of the proposal's revisions (rulebook section 11). Runs
// every engine (the model-based properties and the Z3 checks) on two rulesets and prints what
// the later one breaks and fixes, each with a minimal counterexample; or, with --findings, the
// table of the review findings F1-F5 found in their revision and gone in rev-d.
//
//   ReviewCommand review;                       // a report::Subcommand (cli/commands.cc lists it)
//   CLI::App* sub = report::add_subcommand(app, review);
//   app.parse(argc, argv);  if (sub->parsed()) return review.run(std::cin, std::cout, std::cerr);
//
// Exit 0: it ran and nothing unexpected (--to breaks nothing --from did not; --findings: every
// finding found by both engines in its revision and by neither in rev-d). 1: --to breaks
// something --from did not (or a finding is not where the rulebook puts it). 2: usage.
#ifndef PERMITCHECK_CLI_REVIEW_H_
#define PERMITCHECK_CLI_REVIEW_H_

#include <optional>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "report/subcommand.h"
#include "cli/options.h"

namespace permitcheck::cli {

class ReviewCommand final : public report::Subcommand {
 public:
  std::string_view name() const override { return "review"; }
  std::string_view description() const override;
  std::string_view examples() const override;
  report::Audience audience() const override { return report::Audience::kMaintainer; }
  void add_options(CLI::App& sub) override;
  int run(std::istream& in, std::ostream& out, std::ostream& err) override;

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
