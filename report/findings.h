// The findings section of a text report: every violation as spec::format_finding prints it
// ("line 14: E2 command 7 returned 9 permits ..."), then every known deviation with its mark,
// one per line. Commands fill it with their engine's findings (conform's counterexamples,
// replay's rulesets) instead of writing the loop each.
//
//   std::string text = "findings:\n";
//   text += findings_text(outcome.violations, outcome.deviations);
//   // "  line 14: E2 ...\n  (known deviation) line 9: X1 ...\n"
//
// Guarantees: the violations come first, each list in its given order; nothing is added but
// the indent, the mark and a newline per finding. O(total text length).
#ifndef PERMITCHECK_REPORT_FINDINGS_H_
#define PERMITCHECK_REPORT_FINDINGS_H_

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "spec/monitor.h"
#include "spec/rule_id.h"

namespace permitcheck::report {

struct FindingsStyle {
  std::string_view indent = "  ";                       // before every line
  std::string_view deviation_mark = "(known deviation) ";  // after the indent, for a deviation
};

std::string findings_text(const std::vector<spec::Finding>& violations,
                          const std::vector<spec::Finding>& deviations,
                          const FindingsStyle& style = {});

// The end of a text report that explains each rule ID its findings name once:
// "Rules (docs/rules.md):\n  E2  <title>\n ...", in rulebook order; "" when `named` is empty.
// O(number of rules).
std::string rules_legend(const std::set<spec::RuleId>& named);

}  // namespace permitcheck::report

#endif  // PERMITCHECK_REPORT_FINDINGS_H_
