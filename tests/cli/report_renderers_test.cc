// The shared renderers of report/: the text findings section (findings.h) and the JSON
// writer's settings (json.h). Each pinned on known input, a bad byte included.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "report/findings.h"
#include "report/json.h"
#include "spec/monitor.h"
#include "spec/rule_id.h"

namespace permitcheck::report {
namespace {

spec::Finding make_finding(spec::RuleId rule, std::uint64_t line, std::string text) {
  spec::Finding f;
  f.rule = rule;
  f.line = line;
  f.explanation = std::move(text);
  return f;
}

TEST(FindingsText, ViolationsFirstThenDeviationsWithTheirMark) {
  const std::vector<spec::Finding> violations = {make_finding(spec::RuleId::kE2, 14, "over-return")};
  const std::vector<spec::Finding> deviations = {make_finding(spec::RuleId::kX1, 9, "short")};
  EXPECT_EQ(findings_text(violations, deviations),
            "  " + spec::format_finding(violations[0]) + "\n  (known deviation) " +
                spec::format_finding(deviations[0]) + "\n");
  EXPECT_EQ(findings_text(violations, deviations, {.indent = "", .deviation_mark = "known deviation: "}),
            spec::format_finding(violations[0]) + "\nknown deviation: " +
                spec::format_finding(deviations[0]) + "\n");
  EXPECT_EQ(findings_text({}, {}), "");
}

TEST(JsonWriter, OneLineOrIndentedEndingInOneNewline) {
  const nlohmann::ordered_json j = {{"ok", true}, {"n", 2}, {"list", {"a"}}};
  EXPECT_EQ(json_line(j), "{\"ok\":true,\"n\":2,\"list\":[\"a\"]}\n");
  EXPECT_EQ(json_indented(j), "{\n  \"ok\": true,\n  \"n\": 2,\n  \"list\": [\n    \"a\"\n  ]\n}\n");
}

TEST(JsonWriter, InvalidUtf8BecomesReplacementCharacterNotAnException) {
  const nlohmann::ordered_json j = {{"text", std::string("a\xff" "b\n")}};
  std::string out;
  ASSERT_NO_THROW(out = json_line(j));
  EXPECT_EQ(out, "{\"text\":\"a\xEF\xBF\xBD" "b\\n\"}\n");
}

}  // namespace
}  // namespace permitcheck::report
