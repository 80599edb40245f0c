#include "validate/junit.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "validate/json_out.h"

namespace permitcheck::validate {
namespace {

void append_problem(std::string* out, std::string_view element, const JunitCase::Failure& f) {
  absl::StrAppend(out, "      <", absl::string_view(element.data(), element.size()), " type=\"",
                  xml_escape(f.type), "\" message=\"", xml_escape(f.message), "\"");
  if (f.body.empty()) {
    *out += "/>\n";
  } else {
    absl::StrAppend(out, ">", xml_escape(f.body), "</",
                    absl::string_view(element.data(), element.size()), ">\n");
  }
}

}  // namespace

std::string format_junit(const JunitSuite& suite) {
  std::size_t failures = 0, errors = 0;
  for (const JunitCase& c : suite.cases) {
    if (c.error) ++errors;
    else if (c.failure) ++failures;
  }
  const std::string counts = absl::StrCat("tests=\"", suite.cases.size(), "\" failures=\"",
                                          failures, "\" errors=\"", errors, "\"");
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  absl::StrAppend(&out, "<testsuites name=\"", xml_escape(suite.name), "\" ", counts, ">\n");
  absl::StrAppend(&out, "  <testsuite name=\"",
                  xml_escape(suite.suite.empty() ? suite.name : suite.suite), "\" ", counts, ">\n");
  for (const JunitCase& c : suite.cases) {
    absl::StrAppend(&out, "    <testcase classname=\"", xml_escape(c.classname), "\" name=\"",
                    xml_escape(c.name), "\"");
    if (c.seconds) absl::StrAppend(&out, " time=\"", absl::StrFormat("%.3f", *c.seconds), "\"");
    out += ">\n";
    if (c.error) append_problem(&out, "error", *c.error);
    else if (c.failure) append_problem(&out, "failure", *c.failure);
    if (!c.system_out.empty()) {
      absl::StrAppend(&out, "      <system-out>", xml_escape(c.system_out), "</system-out>\n");
    }
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace permitcheck::validate
