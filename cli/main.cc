// permitcheck: the command-line front end. Exit codes: 0 pass, 1 violation (a check failed),
// 2 bad input or usage.
#include <iostream>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/commands.h"
#include "cli/gtest_results.h"
#include "cli/report.h"
#include "cli/selfcheck.h"

namespace {

using permitcheck::cli::kExitBadInput;
using permitcheck::cli::kExitPass;
using permitcheck::cli::kExitViolation;

// Every report goes to standard output; a write that failed (a full disk, /dev/full, a closed
// pipe) is bad output, never a silent pass.
int checked(int code) {
  std::cout.flush();
  if (std::cout) return code;
  std::cerr << "permitcheck: cannot write the report to standard output\n";
  return kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"permitcheck: a verification suite for Apache Pulsar's PIP-491 permit rules.\n"
               "Exit codes: 0 pass, 1 violation, 2 bad input or usage.\n"
               "Every finding starts with a rule ID (K5, E2, ...); docs/rules.md explains each one.",
               "permitcheck"};
  app.set_version_flag("--version", std::string("permitcheck ") + PERMITCHECK_VERSION);
  app.require_subcommand(1);

  std::string results_dir;
  std::string format = "text";
  CLI::App* selfcheck = app.add_subcommand(
      "selfcheck",
      "The specification's self-check: every rule ID with the tests that pin it (from "
      "GoogleTest JSON results), and the legacy catalogue checked against each ruleset.");
  selfcheck
      ->add_option("--results", results_dir,
                   "Directory of GoogleTest JSON results (test binaries run with "
                   "--gtest_output=json:DIR/NAME.json)")
      ->required();
  selfcheck->add_option("--format", format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();

  // validate, render, replay, check, prove (cli/commands.h).
  permitcheck::cli::Commands commands(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitPass : kExitBadInput;  // --help and --version exit 0
  }
  if (std::optional<int> code = commands.run(std::cin, std::cout, std::cerr)) return checked(*code);

  absl::StatusOr<permitcheck::cli::TestResults> results =
      permitcheck::cli::read_gtest_results(results_dir);
  if (!results.ok()) {
    std::cerr << "permitcheck selfcheck: bad --results: " << results.status().message() << "\n";
    return kExitBadInput;
  }
  permitcheck::cli::SelfCheck check = permitcheck::cli::run_selfcheck(*results);
  std::cout << (format == "json" ? permitcheck::cli::format_json(check)
                                 : permitcheck::cli::format_text(check));
  return checked(check.ok() ? kExitPass : kExitViolation);
}
