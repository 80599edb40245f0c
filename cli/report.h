// The report layer of the `permitcheck` command: the exit codes every subcommand returns
// (spec/outcome.h), and the one set of writers they share (text escaping for JSON and XML, the
// JUnit XML writer, the validate reports). Subcommands format their own content and hand it
// to these writers.
//
//   JunitSuite suite{.name = "permitcheck check"};
//   suite.cases.push_back({.classname = "permitcheck.check", .name = "holds"});
//   out << format_junit(suite);
//   return kExitPass;
//
// The writers live in validate/ (validate's reports need them without the command line); this
// header is where cli code finds them.
#ifndef PERMITCHECK_CLI_REPORT_H_
#define PERMITCHECK_CLI_REPORT_H_

#include <ostream>
#include <string>
#include <string_view>

#include "spec/outcome.h"
#include "validate/json_out.h"
#include "validate/junit.h"
#include "validate/report.h"
#include "validate/validate.h"

namespace permitcheck::cli {

// Exit codes of every subcommand: spec/outcome.h (docs/cli.md, "Outcomes and exit codes").
using spec::ExitCode;
using spec::kExitBadInput;
using spec::kExitIncomplete;
using spec::kExitPass;
using spec::kExitViolation;

using validate::append_json_string;
using validate::format_junit;
using validate::json_string;
using validate::JunitCase;
using validate::JunitSuite;
using validate::valid_utf8;
using validate::xml_escape;

using validate::AppliedRules;
using validate::applied_rules;
using validate::EventFamilies;
using validate::FileResult;
using validate::finding_json;
using validate::finding_object;
using validate::format_validate;
using validate::kValidateMaxLineBytes;
using validate::parse_report_format;
using validate::ReportFormat;
using validate::validate_exit_code;
using validate::validate_path;
using validate::validate_stream;
using validate::ValidateOptions;

// Writes `text` to the file `path` (empty: to `out`), flushes, and checks that every byte got
// there: a full disk, /dev/full or a closed pipe is reported on `err` as "permitcheck COMMAND:
// cannot write PATH: reason" and gives false (the caller exits kExitBadInput).
bool write_report(const std::string& path, std::ostream& out, std::string_view text,
                  std::string_view command, std::ostream& err);

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_REPORT_H_
