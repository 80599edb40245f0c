// replay for a client developer (issue 35): legacy, rev-d and the trace's own ruleset by
// default, the draft revisions rev-a..rev-c only with --all-rulesets, and each rule ID the
// findings name explained once, at the end of the report.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/outcome.h"
#include "tests/cli/cli_testing.h"

namespace permitcheck::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string replayed_over_return() { return testing::source_dir() + "/docs/examples/client-over-return.jsonl"; }

std::size_t occurrences_in(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ReplayRulesets, TheDraftRevisionsAreShownOnlyWhenAskedFor) {
  const testing::Run plain = testing::run_permitcheck({"replay", replayed_over_return()});
  EXPECT_EQ(plain.code, spec::kExitViolation) << plain.err;
  EXPECT_THAT(plain.out, HasSubstr("specification, ruleset legacy:"));
  EXPECT_THAT(plain.out, HasSubstr("specification, ruleset rev-d (the trace's ruleset):"));
  EXPECT_THAT(plain.out, Not(HasSubstr("rev-a")));
  EXPECT_THAT(plain.out, Not(HasSubstr("rev-b")));
  EXPECT_THAT(plain.out, Not(HasSubstr("rev-c")));

  const testing::Run all = testing::run_permitcheck({"replay", "--all-rulesets", replayed_over_return()});
  EXPECT_EQ(all.code, plain.code);
  for (const char* r : {"rev-a:", "rev-b:", "rev-c:"}) {
    EXPECT_THAT(all.out, HasSubstr(std::string("specification, ruleset ") + r)) << all.out;
  }
}

TEST(ReplayRulesets, ATraceOfADraftRulesetRunsUnderItsOwnRuleset) {
  // The header's ruleset always runs, a draft too.
  std::string trace = testing::read_file(replayed_over_return());
  const std::size_t at = trace.find("\"source\":\"client\",");
  ASSERT_NE(at, std::string::npos) << "the example's header";
  trace.insert(at, "\"ruleset\":\"rev-b\",");
  const testing::Run r = testing::run_permitcheck({"replay", "-"}, trace);
  EXPECT_THAT(r.out, HasSubstr("specification, ruleset rev-b (the trace's ruleset):")) << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("rev-a")));
}

TEST(ReplayRulesets, EachRuleIdIsExplainedOnceAtTheEnd) {
  const testing::Run all = testing::run_permitcheck({"replay", "--all-rulesets", replayed_over_return()});
  const std::size_t legend = all.out.find("Rules (docs/rules.md):\n");
  ASSERT_NE(legend, std::string::npos) << all.out;
  EXPECT_EQ(occurrences_in(all.out, "Rules (docs/rules.md):"), 1u);
  const std::string tail = all.out.substr(legend);
  // E2 is named by four rulesets' findings and explained in one line.
  EXPECT_GE(occurrences_in(all.out, " E2 "), 4u);
  EXPECT_EQ(occurrences_in(tail, "\n  E2  "), 1u) << tail;
  EXPECT_EQ(occurrences_in(tail, "\n  K7  "), 1u) << tail;
}

TEST(ReplayRulesets, TheLegendNamesOnlyTheRulesTheFindingsName) {
  const testing::Run r = testing::run_permitcheck(
      {"replay", testing::source_dir() + "/docs/examples/client-pass.jsonl"});
  EXPECT_EQ(r.code, spec::kExitPass) << r.err;  // rev-d holds; legacy does not
  const std::size_t legend = r.out.find("Rules (docs/rules.md):\n");
  ASSERT_NE(legend, std::string::npos) << r.out;
  const std::string tail = r.out.substr(legend);
  EXPECT_THAT(tail, HasSubstr("\n  C1  "));
  EXPECT_THAT(tail, HasSubstr("\n  K5  "));
  EXPECT_THAT(tail, Not(HasSubstr("\n  E2  ")));
}

}  // namespace
}  // namespace permitcheck::cli
