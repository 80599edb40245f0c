// `permitcheck selfcheck`: the specification's self-check (cli/selfcheck.h) on a directory of
// GoogleTest JSON results.
//
//   SelfcheckCommand selfcheck;
//   CLI::App* sub = report::add_subcommand(app, selfcheck);
//   app.parse(argc, argv);  if (sub->parsed()) return selfcheck.run(std::cin, std::cout, std::cerr);
//
// Exit (spec/outcome.h): 0 every rule covered and every catalogue row OK, 1 otherwise, 2 a
// results directory that cannot be read.
#ifndef PERMITCHECK_CLI_SELFCHECK_COMMAND_H_
#define PERMITCHECK_CLI_SELFCHECK_COMMAND_H_

#include <istream>
#include <ostream>
#include <string>
#include <string_view>

#include "CLI/CLI.hpp"
#include "report/subcommand.h"

namespace permitcheck::cli {

class SelfcheckCommand final : public report::Subcommand {
 public:
  std::string_view name() const override { return "selfcheck"; }
  std::string_view description() const override;
  std::string_view examples() const override;
  report::Audience audience() const override { return report::Audience::kMaintainer; }
  void add_options(CLI::App& sub) override;
  int run(std::istream& in, std::ostream& out, std::ostream& err) override;

 private:
  std::string results_dir_;
  std::string format_ = "text";
};

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_SELFCHECK_COMMAND_H_
