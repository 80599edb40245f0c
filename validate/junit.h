// JUnit XML, written once for every report of the project (validate, replay, check, prove,
// conform): one suite of test cases, each passing, failing (a violation) or in error (bad
// input, unknown result). Text is escaped by xml_escape (json_out.h), so any bytes are safe.
//
//   JunitSuite suite{.name = "permitcheck validate", .suite = "validate"};
//   suite.cases.push_back({.classname = "permitcheck.validate", .name = "L1.jsonl",
//                          .failure = JunitCase::Failure{"violation", "2 violations", "..."}});
//   std::string xml = format_junit(suite);
#ifndef PERMITCHECK_VALIDATE_JUNIT_H_
#define PERMITCHECK_VALIDATE_JUNIT_H_

#include <optional>
#include <string>
#include <vector>

namespace permitcheck::validate {

struct JunitCase {
  struct Failure {
    std::string type;     // "violation", "bad input", "unknown"
    std::string message;  // one line, the attribute
    std::string body;     // the element text; may be empty
  };
  std::string classname;
  std::string name;
  std::optional<double> seconds;      // the time attribute, when measured
  std::optional<Failure> failure;     // <failure>: a check failed
  std::optional<Failure> error;       // <error>: the case could not be run or read
  std::string system_out;             // <system-out>, when not empty
};

struct JunitSuite {
  std::string name;   // <testsuites name=...>
  std::string suite;  // <testsuite name=...>; `name` when empty
  std::vector<JunitCase> cases;
};

// The suite as a JUnit XML document, with the counts of tests, failures and errors.
std::string format_junit(const JunitSuite& suite);

}  // namespace permitcheck::validate

#endif  // PERMITCHECK_VALIDATE_JUNIT_H_
