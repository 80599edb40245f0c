// The one JUnit XML writer (validate/junit.h) every report uses.
#include "validate/junit.h"

#include <gtest/gtest.h>

namespace permitcheck::validate {
namespace {

TEST(Junit, CountsAndEscapesEveryCase) {
  JunitSuite suite{.name = "permitcheck x", .suite = "x"};
  suite.cases.push_back({.classname = "c", .name = "passes"});
  suite.cases.push_back({.classname = "c", .name = "a<b", .seconds = 1.5,
                         .failure = JunitCase::Failure{"violation", "say \"no\"", "x & y\n"}});
  suite.cases.push_back({.classname = "c", .name = "unreadable",
                         .error = JunitCase::Failure{"bad input", "line 3", ""},
                         .system_out = "\xff"});
  EXPECT_EQ(format_junit(suite),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<testsuites name=\"permitcheck x\" tests=\"3\" failures=\"1\" errors=\"1\">\n"
            "  <testsuite name=\"x\" tests=\"3\" failures=\"1\" errors=\"1\">\n"
            "    <testcase classname=\"c\" name=\"passes\">\n"
            "    </testcase>\n"
            "    <testcase classname=\"c\" name=\"a&lt;b\" time=\"1.500\">\n"
            "      <failure type=\"violation\" message=\"say &quot;no&quot;\">x &amp; y\n</failure>\n"
            "    </testcase>\n"
            "    <testcase classname=\"c\" name=\"unreadable\">\n"
            "      <error type=\"bad input\" message=\"line 3\"/>\n"
            "      <system-out>\xef\xbf\xbd</system-out>\n"
            "    </testcase>\n"
            "  </testsuite>\n</testsuites>\n");
}

TEST(Junit, SuiteNameDefaultsToTheDocumentName) {
  const std::string xml = format_junit(JunitSuite{.name = "permitcheck y"});
  EXPECT_NE(xml.find("<testsuite name=\"permitcheck y\" tests=\"0\" failures=\"0\" errors=\"0\">"),
            std::string::npos)
      << xml;
}

}  // namespace
}  // namespace permitcheck::validate
