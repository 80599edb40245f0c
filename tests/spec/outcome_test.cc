// Tests spec/outcome.h: the outcome vocabulary, how outcomes combine, their exit codes.
#include "spec/outcome.h"

#include <array>

#include <gtest/gtest.h>

namespace permitcheck::spec {
namespace {

constexpr std::array<Outcome, 4> kAll = {Outcome::kPass, Outcome::kFail, Outcome::kIncomplete,
                                         Outcome::kNotApplicable};

TEST(Outcome, ExitCodesAreZeroPassOneFailThreeIncompleteTwoNothingChecked) {
  EXPECT_EQ(exit_code(Outcome::kPass), 0);
  EXPECT_EQ(exit_code(Outcome::kFail), 1);
  EXPECT_EQ(exit_code(Outcome::kIncomplete), 3);
  // A run in which nothing applied checked nothing: neither a pass nor a failure.
  EXPECT_EQ(exit_code(Outcome::kNotApplicable), kExitBadInput);
  EXPECT_EQ(kExitBadInput, 2);
}

TEST(Outcome, NamesAreThoseReportsPrint) {
  EXPECT_EQ(outcome_name(Outcome::kPass), "PASS");
  EXPECT_EQ(outcome_name(Outcome::kFail), "FAIL");
  EXPECT_EQ(outcome_name(Outcome::kIncomplete), "INCOMPLETE");
  EXPECT_EQ(outcome_name(Outcome::kNotApplicable), "NOT-APPLICABLE");
}

TEST(Outcome, NotApplicableNeverDecidesARunOnItsOwn) {
  for (Outcome o : kAll) {
    EXPECT_EQ(combine(Outcome::kNotApplicable, o), o) << outcome_name(o);
    EXPECT_EQ(combine(o, Outcome::kNotApplicable), o) << outcome_name(o);
  }
}

TEST(Outcome, FailBeatsIncompleteBeatsPass) {
  EXPECT_EQ(combine(Outcome::kPass, Outcome::kIncomplete), Outcome::kIncomplete);
  EXPECT_EQ(combine(Outcome::kIncomplete, Outcome::kFail), Outcome::kFail);
  EXPECT_EQ(combine(Outcome::kPass, Outcome::kFail), Outcome::kFail);
  EXPECT_EQ(combine(Outcome::kPass, Outcome::kPass), Outcome::kPass);
}

TEST(Outcome, CombineIsCommutativeAndAssociative) {
  for (Outcome a : kAll) {
    for (Outcome b : kAll) {
      EXPECT_EQ(combine(a, b), combine(b, a));
      for (Outcome c : kAll) EXPECT_EQ(combine(combine(a, b), c), combine(a, combine(b, c)));
    }
  }
}

}  // namespace
}  // namespace permitcheck::spec
