#include "cli/gtest_results.h"

#include <algorithm>
#include <string_view>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "simdjson.h"

namespace permitcheck::cli {
namespace {

namespace fs = std::filesystem;

absl::Status bad(const fs::path& file, const std::string& reason) {
  return absl::InvalidArgumentError(file.string() + ": " + reason);
}

// Reads the string member `key` of `object` into `value`; false if there is none.
bool string_field(simdjson::dom::element object, std::string_view key, std::string_view& value) {
  return object[key].get_string().get(value) == simdjson::SUCCESS;
}

}  // namespace

absl::StatusOr<std::vector<TestResult>> read_gtest_json(const fs::path& file) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto error = parser.load(file.string()).get(doc); error != simdjson::SUCCESS) {
    return bad(file, simdjson::error_message(error));
  }
  simdjson::dom::array suites;
  if (doc["testsuites"].get_array().get(suites) != simdjson::SUCCESS) {
    return bad(file, "not a GoogleTest JSON result (no \"testsuites\" array)");
  }
  std::vector<TestResult> tests;
  for (simdjson::dom::element suite : suites) {
    std::string_view suite_name;
    simdjson::dom::array entries;
    if (!string_field(suite, "name", suite_name) ||
        suite["testsuite"].get_array().get(entries) != simdjson::SUCCESS) {
      return bad(file, "a test suite has no \"name\" or no \"testsuite\" array");
    }
    for (simdjson::dom::element entry : entries) {
      std::string_view name, status, result;
      if (!string_field(entry, "name", name) || !string_field(entry, "status", status) ||
          !string_field(entry, "result", result)) {
        return bad(file, absl::StrCat("a test of suite ", std::string(suite_name),
                                      " lacks a string \"name\", \"status\" or \"result\""));
      }
      if (status != "RUN") continue;  // disabled: not part of the suite's verdict
      simdjson::dom::array failures;
      bool failed = entry["failures"].get_array().get(failures) == simdjson::SUCCESS &&
                    failures.size() > 0;
      Outcome outcome = failed                   ? Outcome::kFailed
                        : result == "COMPLETED" ? Outcome::kPassed
                                                 : Outcome::kNotRun;  // SKIPPED
      tests.push_back(TestResult{.suite = std::string(suite_name),
                                 .name = std::string(name),
                                 .outcome = outcome,
                                 .file = file.filename().string()});
    }
  }
  return tests;
}

absl::StatusOr<TestResults> read_gtest_results(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return bad(dir, "not a directory");
  }
  TestResults results;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json") results.files.push_back(e.path());
  }
  if (ec) return bad(dir, ec.message());
  if (results.files.empty()) {
    return bad(dir, "holds no *.json GoogleTest result (run a test binary with "
                    "--gtest_output=json:DIR/NAME.json)");
  }
  std::sort(results.files.begin(), results.files.end());
  for (const fs::path& file : results.files) {
    absl::StatusOr<std::vector<TestResult>> tests = read_gtest_json(file);
    if (!tests.ok()) return tests.status();
    results.tests.insert(results.tests.end(), tests->begin(), tests->end());
  }
  return results;
}

}  // namespace permitcheck::cli
