// GoogleTest JSON results (--gtest_output=json:FILE), read into one flat list of tests.
//
// A test passed when it ran, completed and recorded no failure; it failed when it ran and
// recorded a failure; anything else (disabled, skipped) did not run. Disabled tests and tests
// a filter excluded are not counted at all.
//
//   absl::StatusOr<TestResults> r = read_gtest_results("build/test-results");
//   if (!r.ok()) std::cerr << r.status().message();  // "x.json: no \"testsuites\" array"
//   for (const TestResult& t : r->tests) std::cout << t.full_name() << "\n";  // "Suite.B1"
#ifndef PERMITCHECK_CLI_GTEST_RESULTS_H_
#define PERMITCHECK_CLI_GTEST_RESULTS_H_

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace permitcheck::cli {

enum class Outcome { kPassed, kFailed, kNotRun };

struct TestResult {
  std::string suite;  // "Inst/CommandBudget" for a parameterized suite
  std::string name;   // "K5_SettlesRest/0"
  Outcome outcome = Outcome::kNotRun;
  std::string file;   // the result file it came from

  std::string full_name() const { return suite + "." + name; }
};

// The tests of one result file. InvalidArgument naming the file and the reason when the file
// cannot be read or is not GoogleTest JSON.
absl::StatusOr<std::vector<TestResult>> read_gtest_json(const std::filesystem::path& file);

struct TestResults {
  std::vector<std::filesystem::path> files;  // in name order
  std::vector<TestResult> tests;             // file by file, in file order
};

// The tests of every *.json file directly in `dir`. InvalidArgument when `dir` is not a
// directory, holds no *.json file, or any of its files is unreadable.
absl::StatusOr<TestResults> read_gtest_results(const std::filesystem::path& dir);

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_GTEST_RESULTS_H_
