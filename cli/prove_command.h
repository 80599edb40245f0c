// `permitcheck prove`: the Z3 checks of the permit invariants (solver/prove.h, run by
// cli/engines.h run_prove). The one command line of the solver: no other front end takes
// these options.
//
//   ProveCommand prove;
//   CLI::App* sub = report::add_subcommand(app, prove);
//   app.parse(argc, argv);  if (sub->parsed()) return prove.run(std::cin, std::cout, std::cerr);
//
// Exit (spec/outcome.h): 0 every check proved, 1 a counterexample or an undecided check,
// 2 usage or a build without the solver; SIGINT/SIGTERM: the checks so far, 130/143.
#ifndef PERMITCHECK_CLI_PROVE_COMMAND_H_
#define PERMITCHECK_CLI_PROVE_COMMAND_H_

#include <istream>
#include <ostream>
#include <string>
#include <string_view>

#include "CLI/CLI.hpp"
#include "cli/engines.h"
#include "report/subcommand.h"

namespace permitcheck::cli {

class ProveCommand final : public report::Subcommand {
 public:
  std::string_view name() const override { return "prove"; }
  std::string_view description() const override;
  std::string_view examples() const override;
  report::Audience audience() const override { return report::Audience::kMaintainer; }
  void add_options(CLI::App& sub) override;
  int run(std::istream& in, std::ostream& out, std::ostream& err) override;

 private:
  ProveOptions options_;
};

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_PROVE_COMMAND_H_
