// The command line's texts in plain words (issue 35): a matrix cell's reason counts "1 case" and
// "2 cases", never "case(s)".
#ifdef PERMITCHECK_REFERENCE_CLIENT  // the conformance module is part of this build
#include <string>

#include "cli/matrix_run.h"
#include "conformance/conform.h"
#include "gtest/gtest.h"

namespace permitcheck::cli {
namespace {

// The reason of the cell of a passing complete_batches scenario with `cases` cases passed.
std::string passing_cell_reason(int cases) {
  conformance::ScenarioReport s{.kind = *conformance::parse_scenario("complete_batches")};
  s.runs = cases;
  s.cases_passed = cases;
  s.windows = {"every entry delivered"};
  conformance::ConformReport r;
  r.scenarios.push_back(s);
  matrix::Cell c;
  fill_cell(c, r);
  return c.reason;
}

TEST(CliPlainText, AMatrixCellCountsOneCaseAndManyCases) {
  EXPECT_EQ(passing_cell_reason(1), "1 case passed");
  EXPECT_EQ(passing_cell_reason(2), "2 cases passed");
}

}  // namespace
}  // namespace permitcheck::cli
#endif  // PERMITCHECK_REFERENCE_CLIENT
