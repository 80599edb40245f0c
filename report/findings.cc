#include "report/findings.h"

#include "absl/strings/str_cat.h"
#include "base/absl_view.h"

namespace permitcheck::report {

std::string findings_text(const std::vector<spec::Finding>& violations,
                          const std::vector<spec::Finding>& deviations,
                          const FindingsStyle& style) {
  std::string out;
  for (const spec::Finding& f : violations) {
    absl::StrAppend(&out, to_absl(style.indent), spec::format_finding(f), "\n");
  }
  for (const spec::Finding& f : deviations) {
    absl::StrAppend(&out, to_absl(style.indent), to_absl(style.deviation_mark),
                    spec::format_finding(f),
                    "\n");
  }
  return out;
}

std::string rules_legend(const std::set<spec::RuleId>& named) {
  if (named.empty()) return "";
  std::string out = "Rules (docs/rules.md):\n";
  for (const spec::RuleInfo& info : spec::all_rules()) {
    if (named.contains(info.id)) {
      absl::StrAppend(&out, "  ", to_absl(info.name), "  ", to_absl(info.title), "\n");
    }
  }
  return out;
}

}  // namespace permitcheck::report
