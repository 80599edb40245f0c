// A matrix cell's outcome is the scenario's own verdict from conform (spec::Outcome), never
// guessed from the wording of its reasons: a scenario NOT-APPLICABLE to the client (its
// Subscribe names no consumer epoch) is a NOT-APPLICABLE cell, not a PASS, and one whose window
// did not open is INCOMPLETE.
#ifdef PERMITCHECK_REFERENCE_CLIENT  // the conformance module is part of this build
#include "cli/matrix_run.h"
#include "conformance/conform.h"
#include "gtest/gtest.h"

namespace permitcheck::cli {
namespace {

conformance::ConformReport one(conformance::ScenarioReport s) {
  conformance::ConformReport r;
  r.scenarios.push_back(std::move(s));
  return r;
}

conformance::ScenarioReport stale_epoch() {
  conformance::ScenarioReport s{.kind = *conformance::parse_scenario("stale_epoch")};
  s.runs = 3;
  s.cases_passed = 3;
  return s;
}

TEST(MatrixCell, AScenarioTheClientCannotOpenIsNotApplicableNotPass) {
  conformance::ScenarioReport s = stale_epoch();
  s.cannot_open = {"the client's Subscribe named no consumer epoch"};
  matrix::Cell c;
  fill_cell(c, one(s));
  EXPECT_EQ(c.outcome, spec::Outcome::kNotApplicable);
  EXPECT_NE(c.reason.find("named no consumer epoch"), std::string::npos) << c.reason;
}

TEST(MatrixCell, AWindowNotOpenedIsIncomplete) {
  conformance::ScenarioReport s = stale_epoch();
  s.not_opened = {"run 1: the client acknowledged before the drop"};
  matrix::Cell c;
  fill_cell(c, one(s));
  EXPECT_EQ(c.outcome, spec::Outcome::kIncomplete);
}

TEST(MatrixCell, AWindowOpenedWithoutFindingsIsPass) {
  conformance::ScenarioReport s = stale_epoch();
  s.windows = {"held 3 across the drop"};
  matrix::Cell c;
  fill_cell(c, one(s));
  EXPECT_EQ(c.outcome, spec::Outcome::kPass);
}

}  // namespace
}  // namespace permitcheck::cli
#endif
