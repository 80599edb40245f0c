// The text of a finding carried as its parts (a saved case's rule, line and explanation, a
// report read back), the same as spec::format_finding gives for a spec::Finding, so that a
// report formats it without building a finding of its own.
//
//   format_finding(RuleId::kE2, 14, "command 7 returned 9 ...");  // "line 14: E2 command 7 ..."
//
// Guarantees: linear in the explanation.
#ifndef PERMITCHECK_SPEC_FINDING_TEXT_H_
#define PERMITCHECK_SPEC_FINDING_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "spec/rule_id.h"

namespace permitcheck::spec {

std::string format_finding(RuleId rule, std::uint64_t line, std::string_view explanation);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_FINDING_TEXT_H_
