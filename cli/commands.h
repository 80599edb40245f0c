// The subcommands of `permitcheck` beyond `selfcheck`: validate, render, replay, check, prove.
// They are registered on the caller's CLI11 app, so main() keeps one parser and one --help.
//
//   CLI::App app{"permitcheck"};
//   Commands commands(app);
//   app.parse(argc, argv);
//   if (std::optional<int> code = commands.run(std::cin, std::cout, std::cerr)) return *code;
//
// Exit codes: 0 everything holds, 1 a violation was found, 2 bad input or usage (the message
// names the file, the line and the reason).
#ifndef PERMITCHECK_CLI_COMMANDS_H_
#define PERMITCHECK_CLI_COMMANDS_H_

#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/engines.h"
#include "cli/report.h"

namespace permitcheck::cli {

class Commands {
 public:
  // Adds the subcommands to `app`. REQUIRES: `app` outlives this object.
  explicit Commands(CLI::App& app);

  // After a successful app.parse(): runs the subcommand that was chosen and returns its exit
  // code, or nullopt when none of these was chosen. `in` is what "-" reads. A deprecated
  // spelling of an option warns on `err` first (cli/options.h); one given with its new
  // spelling is exit 2.
  std::optional<int> run(std::istream& in, std::ostream& out, std::ostream& err);

  // Whether progress lines go to stderr (default: when stderr is a terminal).
  void set_progress(bool on) { progress_ = on; }

 private:
  int run_validate(std::istream& in, std::ostream& out, std::ostream& err);
  int run_validate_files(std::istream& in, std::ostream& out, std::ostream& err);
  int run_render(std::istream& in, std::ostream& out, std::ostream& err);
  int run_replay(std::istream& in, std::ostream& out, std::ostream& err);

  CLI::App* app_ = nullptr;
  CLI::App* validate_ = nullptr;
  CLI::App* render_ = nullptr;
  CLI::App* replay_ = nullptr;
  CLI::App* prove_ = nullptr;

  bool progress_ = false;
  bool no_progress_ = false;

  // validate
  std::vector<std::string> traces_;
  std::string validate_format_ = "text";
  std::string validate_ruleset_;
  std::string output_;
  std::size_t max_line_bytes_ = kValidateMaxLineBytes;
  std::string max_memory_ = "1G";  // kValidateMaxMemory
  int validate_threads_ = 2;
  int validate_jobs_ = 0;  // 0: validate::default_jobs()
  // render / replay
  std::string cex_;
  std::string render_format_ = "text";
  std::string replay_format_ = "text";
  // prove (check: cli/check.h)
  ProveOptions prove_options_;
};

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_COMMANDS_H_
