// `permitcheck check`: the model-based properties. One property (the reference implementation
// running --ruleset, checked by the monitor and the model against --against), or, with --suite,
// the whole report of `permitcheck-properties` with the same options, registered by the same
// function (properties/options.h): --find-cases, --mutant-cases, --out, --no-mutants,
// --no-legacy, and --seed, --cases, --steps with that binary's defaults when not given.
//
//   CheckCommand check;                       // a report::Subcommand (cli/commands.cc lists it)
//   CLI::App* sub = report::add_subcommand(app, check);
//   app.parse(argc, argv);  if (sub->parsed()) return check.run(std::cin, std::cout, std::cerr);
//
// Exit 0 the property holds (--suite: the report is OK), 1 a counterexample (--suite: a part
// of the report failed), 2 usage.
#ifndef PERMITCHECK_CLI_CHECK_H_
#define PERMITCHECK_CLI_CHECK_H_

#include <memory>
#include <optional>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>

#include "CLI/CLI.hpp"
#include "report/subcommand.h"
#include "cli/engines.h"

namespace permitcheck::cli {

class CheckCommand final : public report::Subcommand {
 public:
  CheckCommand();
  std::string_view name() const override { return "check"; }
  std::string_view description() const override;
  std::string_view examples() const override;
  report::Audience audience() const override { return report::Audience::kMaintainer; }
  void add_options(CLI::App& sub) override;
  ~CheckCommand();
  int run(std::istream& in, std::ostream& out, std::ostream& err) override;

 private:
  struct Suite;  // the suite's options, when the properties are built (check.cc)
  CLI::App* sub_ = nullptr;
  CheckOptions options_;
  std::string shard_ = "0/1";
  bool suite_ = false;
  std::unique_ptr<Suite> suite_options_;
};

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_CHECK_H_
