// Reports of `validate` in the three formats of the command: text for a terminal, JSON for
// tools, JUnit XML so CI systems show one test case per trace.
//
//   std::vector<FileResult> results = ...;                 // validate.h
//   std::cout << format_validate(results, ReportFormat::kJunit);
//
// Violations are printed exactly as trace-format.md's Verdicts section shows them
// ("line 14: E2 command 7 returned 9 permits but its P is 8 (over-return by 1)"); known
// deviations are listed apart and never fail a trace. The output holds no timings, so the same
// input always gives the same report (golden tests pin it).
#ifndef PERMITCHECK_VALIDATE_REPORT_H_
#define PERMITCHECK_VALIDATE_REPORT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "validate/validate.h"
#include "spec/monitor.h"

namespace permitcheck::validate {

enum class ReportFormat { kText, kJson, kJunit };
std::optional<ReportFormat> parse_report_format(std::string_view name);  // "text", "json", "junit"

std::string format_validate(const std::vector<FileResult>& results, ReportFormat format);

// One finding as a JSON object: {"line":14,"rule":"E2","text":"...","message":"line 14: E2 ..."}.
std::string finding_json(const spec::Finding& finding);

}  // namespace permitcheck::validate

#endif  // PERMITCHECK_VALIDATE_REPORT_H_
