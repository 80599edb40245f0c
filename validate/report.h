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

#include "nlohmann/json.hpp"
#include "validate/validate.h"
#include "spec/monitor.h"

namespace permitcheck::validate {

enum class ReportFormat { kText, kJson, kJunit };
std::optional<ReportFormat> parse_report_format(std::string_view name);  // "text", "json", "junit"

std::string format_validate(const std::vector<FileResult>& results, ReportFormat format);

// One finding as a JSON object, the same in every command's JSON report (schema:
// docs/schemas/finding.schema.json): {"line":14,"rule":"E2","text":"...","message":"line 14:
// E2 ..."}; line 0 when the finding has no trace line.
nlohmann::ordered_json finding_object(const spec::Finding& finding);
std::string finding_json(const spec::Finding& finding);  // finding_object(...).dump()
// The same object for a finding reported by an engine that keeps its own record (a property's
// counterexample): its rule, trace line (0: none) and text.
nlohmann::ordered_json finding_object(spec::RuleId rule, std::uint64_t line, std::string_view text);

}  // namespace permitcheck::validate

#endif  // PERMITCHECK_VALIDATE_REPORT_H_
