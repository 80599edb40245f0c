#include "cli/selfcheck_command.h"

#include "absl/status/statusor.h"
#include "cli/gtest_results.h"
#include "cli/selfcheck.h"
#include "spec/outcome.h"

namespace permitcheck::cli {

std::string_view SelfcheckCommand::description() const {
  return "The specification's self-check: every rule ID with the tests that pin it (from "
         "GoogleTest JSON results), and the legacy catalogue checked against each ruleset.";
}

std::string_view SelfcheckCommand::examples() const {
  return "  permitcheck selfcheck --results build/test-results --format json";
}

void SelfcheckCommand::add_options(CLI::App& sub) {
  sub.add_option("--results", results_dir_,
                 "Directory of GoogleTest JSON results (test binaries run with "
                 "--gtest_output=json:DIR/NAME.json)")
      ->required();
  sub.add_option("--format", format_, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

int SelfcheckCommand::run(std::istream&, std::ostream& out, std::ostream& err) {
  absl::StatusOr<TestResults> results = read_gtest_results(results_dir_);
  if (!results.ok()) {
    err << "permitcheck selfcheck: bad --results: " << results.status().message() << "\n";
    return spec::kExitBadInput;
  }
  const SelfCheck check = run_selfcheck(*results);
  out << (format_ == "json" ? format_json(check) : format_text(check));
  return check.ok() ? spec::kExitPass : spec::kExitViolation;
}

}  // namespace permitcheck::cli
