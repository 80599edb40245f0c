// The main job's output, pinned: the table for known results, and the names of the checks.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "solver/prove.h"

namespace permitcheck::solver {
namespace {

TEST(SolverTable, CheckNamesRoundTrip) {
  ASSERT_EQ(all_checks().size(), 8u);
  EXPECT_EQ(parse_check("conservation-all"), Check::kConservationAll);
  EXPECT_EQ(parse_check("finalization-all"), Check::kFinalizationAll);
  EXPECT_EQ(parse_check("isolation-all"), Check::kIsolationAll);
  EXPECT_EQ(parse_check("induction-all"), Check::kInductionAll);
  for (const Check c : all_checks()) EXPECT_EQ(parse_check(check_name(c)), c);
  EXPECT_EQ(parse_check("nosuch"), std::nullopt);
  EXPECT_EQ(check_rules(Check::kConservation), "E1 E2 K5 K6 K7 K8");
  EXPECT_EQ(check_rules(Check::kInduction), "E5 E6");
}

std::vector<Result> known_results() {
  Witness w{.id = "L1",
            .situation = "checksum failure",
            .rule = spec::RuleId::kC7,
            .finding = "line 7: C7 ...",
            .words = "B=2 (batch), message_permits=2, ack_set absent, checksum fails, returned 1, "
                     "P=2 (1 lost)"};
  return {
      Result{.check = Check::kConservation, .ruleset = spec::RulesetId::kRevD, .bound = "B<=64",
             .outcome = Proved{"..."}, .seconds = 0.25, .queries = 1},
      Result{.check = Check::kConservation, .ruleset = spec::RulesetId::kLegacy, .bound = "B<=64",
             .outcome = Counterexample{{w}, ""}, .seconds = 6.5, .queries = 140},
      Result{.check = Check::kIsolation, .ruleset = spec::RulesetId::kRevD, .bound = "depth 12, Q<=8",
             .outcome = Unknown{"timeout"}, .seconds = 60, .queries = 3},
      Result{.check = Check::kInductionAll, .ruleset = spec::RulesetId::kRevD,
             .bound = "any run, any Q, T, B, P <= 2^31-1 (summaries)", .bounded = false,
             .outcome = Proved{"..."}, .seconds = 0.03, .queries = 3},
  };
}

TEST(SolverTable, C7_TableIsPinned) {
  EXPECT_EQ(format_table(known_results()),
            "check            ruleset scope           bound                                                result               seconds  expected\n"
            "conservation     rev-d   bounded         B<=64                                                proved                  0.25  yes\n"
            "conservation     legacy  bounded         B<=64                                                counterexample (1)      6.50  yes\n"
            "isolation        rev-d   bounded         depth 12, Q<=8                                       unknown                60.00  NO\n"
            "induction-all    rev-d   all parameters  any run, any Q, T, B, P <= 2^31-1 (summaries)        proved                  0.03  yes\n"
            "\n"
            "conservation / legacy counterexamples (checked against rev-d):\n"
            "  L1   C7   checksum failure                           B=2 (batch), message_permits=2, "
            "ack_set absent, checksum fails, returned 1, P=2 (1 lost)\n"
            "\n"
            "isolation / rev-d: unknown: timeout\n");
}

TEST(SolverTable, C7_JsonListsEveryResult) {
  const std::string json = format_json(known_results());
  EXPECT_NE(json.find("\"check\": \"conservation\", \"ruleset\": \"rev-d\", \"outcome\": \"proved\", "
                      "\"bounded\": true, \"bound\": \"B<=64\", \"result\": \"proved\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"check\": \"induction-all\", \"ruleset\": \"rev-d\", \"outcome\": "
                      "\"proved\", \"bounded\": false, \"bound\": \"any run"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"id\": \"L1\", \"rule\": \"C7\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"reason\": \"timeout\""), std::string::npos) << json;
}

}  // namespace
}  // namespace permitcheck::solver
