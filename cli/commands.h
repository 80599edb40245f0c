// The subcommands of `permitcheck`, as one list: each is a report::Subcommand in its own file
// (conform, matrix, tap, real-broker, validate, render, replay; for the maintainers review,
// check, prove, selfcheck). Commands registers them on the caller's CLI11 app, in that order,
// so main() keeps one parser and one --help, and runs the one that was parsed.
//
//   CLI::App app{"permitcheck"};
//   Commands commands(app);
//   app.parse(argc, argv);
//   if (std::optional<int> code = commands.run(std::cin, std::cout, std::cerr)) return *code;
//
// Exit codes: spec/outcome.h (0 pass, 1 violation, 2 bad input or usage, 3 incomplete).
#ifndef PERMITCHECK_CLI_COMMANDS_H_
#define PERMITCHECK_CLI_COMMANDS_H_

#include <istream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "report/subcommand.h"

namespace permitcheck::cli {

class ValidateCommand;

class Commands {
 public:
  // Adds every subcommand to `app`. REQUIRES: `app` outlives this object.
  explicit Commands(CLI::App& app);
  ~Commands();

  // After a successful app.parse(): runs the subcommand that was chosen and returns its exit
  // code, or nullopt when none was chosen. `in` is what "-" reads. A deprecated spelling of an
  // option warns on `err` first (cli/options.h); one given with its new spelling is exit 2.
  std::optional<int> run(std::istream& in, std::ostream& out, std::ostream& err);

  // The subcommands' names, the users' before the maintainers' (as --help lists them).
  std::vector<std::string> names() const;

  // Whether validate's progress lines go to stderr (default: when stderr is a terminal).
  void set_progress(bool on);

 private:
  CLI::App* app_ = nullptr;
  std::vector<std::unique_ptr<report::Subcommand>> commands_;
  std::vector<CLI::App*> subs_;  // subs_[i] is commands_[i]'s
  ValidateCommand* validate_ = nullptr;
};

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_COMMANDS_H_
