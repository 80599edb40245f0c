// `permitcheck check`: the model-based properties. One property (the reference implementation
// running --ruleset, checked by the monitor and the model against --against), or, with --suite,
// the whole report of `permitcheck-properties` with the same options, registered by the same
// function (properties/options.h): --find-cases, --mutant-cases, --out, --no-mutants,
// --no-legacy, and --seed, --cases, --steps with that binary's defaults when not given.
//
//   CLI::App app;
//   CheckCommand check(app);               // adds the "check" subcommand
//   app.parse(argc, argv);
//   if (std::optional<int> code = check.run(std::cout, std::cerr)) return *code;
//
// Exit 0 the property holds (--suite: the report is OK), 1 a counterexample (--suite: a part
// of the report failed), 2 usage.
#ifndef PERMITCHECK_CLI_CHECK_H_
#define PERMITCHECK_CLI_CHECK_H_

#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/engines.h"

namespace permitcheck::cli {

class CheckCommand {
 public:
  explicit CheckCommand(CLI::App& app);
  ~CheckCommand();
  // nullopt when `check` was not the chosen subcommand.
  std::optional<int> run(std::ostream& out, std::ostream& err);

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
