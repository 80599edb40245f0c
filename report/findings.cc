#include "report/findings.h"

#include "absl/strings/str_cat.h"
#include "spec/absl_view.h"

namespace permitcheck::report {

std::string findings_text(const std::vector<spec::Finding>& violations,
                          const std::vector<spec::Finding>& deviations,
                          const FindingsStyle& style) {
  std::string out;
  for (const spec::Finding& f : violations) {
    absl::StrAppend(&out, av(style.indent), spec::format_finding(f), "\n");
  }
  for (const spec::Finding& f : deviations) {
    absl::StrAppend(&out, av(style.indent), av(style.deviation_mark), spec::format_finding(f),
                    "\n");
  }
  return out;
}

}  // namespace permitcheck::report
