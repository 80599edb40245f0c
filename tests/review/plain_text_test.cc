// `permitcheck review`'s verdict in plain words (issue 35): "breaks 1 thing", "breaks 2 things",
// never "thing(s)".
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "review/review.h"

namespace permitcheck::review {
namespace {

// A comparison rev-b -> rev-c whose rev-c breaks `n` things rev-b did not (no engine run).
Comparison breaking(int n) {
  Comparison c;
  c.from.ruleset = spec::RulesetId::kRevB;
  c.to.ruleset = spec::RulesetId::kRevC;
  for (int i = 0; i < n; ++i) {
    c.breaks.push_back(Change{.key = "F" + std::to_string(i + 1), .engines = "solver",
                              .example = "e", .rule = "E1"});
  }
  return c;
}

TEST(ReviewPlainText, TheVerdictCountsOneThingAndManyThings) {
  EXPECT_THAT(format_comparison(breaking(1)),
              ::testing::HasSubstr("verdict: rev-c breaks 1 thing rev-b did not\n"));
  EXPECT_THAT(format_comparison(breaking(2)),
              ::testing::HasSubstr("verdict: rev-c breaks 2 things rev-b did not\n"));
}

}  // namespace
}  // namespace permitcheck::review
