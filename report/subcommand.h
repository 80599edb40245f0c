// One subcommand of `permitcheck`: what it is called, what its --help says (a description and
// examples), the options it registers, and how it runs. Every subcommand is one object behind
// this interface; cli/commands.cc builds the list, add_subcommand registers each one the same
// way (its --help group by audience, its examples at the foot), and the one that was parsed runs.
//
//   CLI::App app{"permitcheck"};
//   CLI::App* sub = add_subcommand(app, validate_command);   // a Subcommand
//   app.parse(argc, argv);  if (sub->parsed()) return validate_command.run(std::cin, std::cout, std::cerr);
//
// Guarantees: add_subcommand calls add_options exactly once, on the subcommand it creates;
// run is called at most once, after a successful parse that chose this subcommand. run returns
// an exit status of spec/outcome.h (0 PASS, 1 FAIL, 2 bad input or usage, 3 INCOMPLETE) or,
// when a signal ended the run, 128 + the signal's number.
#ifndef PERMITCHECK_REPORT_SUBCOMMAND_H_
#define PERMITCHECK_REPORT_SUBCOMMAND_H_

#include <istream>
#include <ostream>
#include <string_view>

#include "CLI/CLI.hpp"

namespace permitcheck::report {

// Who a subcommand is for: --help lists the users' commands before the maintainers'.
enum class Audience { kUser, kMaintainer };

class Subcommand {
 public:
  virtual ~Subcommand() = default;

  // The word on the command line ("validate").
  virtual std::string_view name() const = 0;
  // The paragraph under its name in --help, with its exit codes.
  virtual std::string_view description() const = 0;
  // Lines of examples, each "  permitcheck NAME ...", shown under "Examples:" at the foot of
  // its --help (tests/cli/help_examples.sh checks that every subcommand has one).
  virtual std::string_view examples() const = 0;
  virtual Audience audience() const { return Audience::kUser; }

  // Registers its options (and nested subcommands) on `sub`, which outlives this object's use.
  virtual void add_options(CLI::App& sub) = 0;

  // Runs the parsed command: `in` is what "-" reads, the report goes to `out` (or its -o file),
  // messages to `err`. Returns the exit status (see the guarantees above).
  virtual int run(std::istream& in, std::ostream& out, std::ostream& err) = 0;
};

// The name of the --help group of each audience.
inline constexpr std::string_view kUserGroup = "Commands";
inline constexpr std::string_view kMaintainerGroup = "Commands for the suite's maintainers";

// Adds `command` to `app`: a subcommand named command.name() with its description, in its
// audience's group, its examples as the footer, and its options. Returns the subcommand.
CLI::App* add_subcommand(CLI::App& app, Subcommand& command);

}  // namespace permitcheck::report

#endif  // PERMITCHECK_REPORT_SUBCOMMAND_H_
