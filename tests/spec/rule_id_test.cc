#include "spec/rule_id.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace permitcheck::spec {
namespace {

TEST(RuleId, EveryRuleHasItsOwnInfoInEnumOrder) {
  const auto rules = all_rules();
  ASSERT_EQ(rules.size(), 61U);  // B 13, W 3, C 7, K 8, S 7, M 3, N 7, E 6, X 7
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < rules.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(rules[i].id), i);
    EXPECT_EQ(rule_info(rules[i].id).name, rules[i].name);
    EXPECT_FALSE(rules[i].title.empty()) << rules[i].name;
    names.insert(rules[i].name);
  }
  EXPECT_EQ(names.size(), rules.size());
  EXPECT_EQ(rules.front().name, "B1");
  EXPECT_EQ(rules.back().name, "X7");
}

TEST(RuleId, NameAndParseRoundTrip) {
  EXPECT_EQ(rule_name(RuleId::kK5), "K5");
  EXPECT_EQ(parse_rule_id("K5"), RuleId::kK5);
  EXPECT_EQ(parse_rule_id("B11"), RuleId::kB11);
  EXPECT_EQ(parse_rule_id("N7"), RuleId::kN7);
  for (const RuleInfo& r : all_rules()) EXPECT_EQ(parse_rule_id(r.name), r.id);
}

TEST(RuleId, ParseRejectsUnknownNames) {
  EXPECT_EQ(parse_rule_id("K9"), std::nullopt);
  EXPECT_EQ(parse_rule_id("k5"), std::nullopt);  // case matters
  EXPECT_EQ(parse_rule_id("L8"), std::nullopt);  // legacy bugs are not rules
  EXPECT_EQ(parse_rule_id(""), std::nullopt);
  EXPECT_EQ(parse_rule_id("B1 "), std::nullopt);
}

TEST(RuleId, OnlyAcceptedInexactnessIsAKnownDeviation) {
  for (const RuleInfo& r : all_rules()) {
    EXPECT_EQ(r.known_deviation, r.name.front() == 'X') << r.name;
  }
  EXPECT_TRUE(rule_info(RuleId::kX1).known_deviation);
  EXPECT_FALSE(rule_info(RuleId::kE2).known_deviation);
}

TEST(RuleId, SectionsFollowTheRulebook) {
  EXPECT_EQ(rule_info(RuleId::kB1).section, "2. Broker rules");
  EXPECT_EQ(rule_info(RuleId::kW1).section, "3. Wire rules");
  EXPECT_EQ(rule_info(RuleId::kC1).section, "4. Resolving and validating P");
  EXPECT_EQ(rule_info(RuleId::kK1).section, "5. The command budget");
  EXPECT_EQ(rule_info(RuleId::kS1).section, "6. Specialised paths");
  EXPECT_EQ(rule_info(RuleId::kM1).section, "7. Message lifecycle and incarnations");
  EXPECT_EQ(rule_info(RuleId::kN7).section, "7. Message lifecycle and incarnations");
  EXPECT_EQ(rule_info(RuleId::kE1).section, "8. End-to-end invariants");
  EXPECT_EQ(rule_info(RuleId::kX1).section, "9. Accepted inexactness");
  for (const RuleInfo& r : all_rules()) {
    const char first = r.name.front();
    const std::string_view expected_prefix =
        first == 'B' ? "2." : first == 'W' ? "3." : first == 'C' ? "4." : first == 'K' ? "5."
        : first == 'S' ? "6." : (first == 'M' || first == 'N') ? "7." : first == 'E' ? "8." : "9.";
    EXPECT_TRUE(r.section.starts_with(expected_prefix)) << r.name << " in " << r.section;
  }
}

}  // namespace
}  // namespace permitcheck::spec
