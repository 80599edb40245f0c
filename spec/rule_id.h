// The rule IDs of the PIP-491 rulebook (sections 2 to 9: docs/rules.md has one row per ID), as one
// closed enumeration.
//
// Every check in the specification names the rule it enforces with a RuleId, and every
// violation or known deviation the suite reports carries one, so a user can look the rule
// up in the rulebook. The list here is the single source for the rule-coverage test and
// for the self-check report.
//
//   for (const RuleInfo& r : all_rules()) std::cout << r.name << " " << r.title;
//   std::optional<RuleId> k5 = parse_rule_id("K5");
//   assert(rule_name(*k5) == "K5");
#ifndef PERMITCHECK_SPEC_RULE_ID_H_
#define PERMITCHECK_SPEC_RULE_ID_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace permitcheck::spec {

enum class RuleId : std::uint8_t {
  // 2. Broker rules.
  kB1, kB2, kB3, kB4, kB5, kB6, kB7, kB8, kB9, kB10, kB11, kB12, kB13,
  // 3. Wire rules.
  kW1, kW2, kW3,
  // 4. Client resolution and validation.
  kC1, kC2, kC3, kC4, kC5, kC6, kC7,
  // 5. Command budget.
  kK1, kK2, kK3, kK4, kK5, kK6, kK7, kK8,
  // 6. Specialised paths.
  kS1, kS2, kS3, kS4, kS5, kS6, kS7,
  // 7. Message lifecycle and incarnations.
  kM1, kM2, kM3, kN1, kN2, kN3, kN4, kN5, kN6, kN7,
  // 8. End-to-end invariants.
  kE1, kE2, kE3, kE4, kE5, kE6,
  // 9. Accepted inexactness (reported as known deviations, never as violations).
  kX1, kX2, kX3, kX4, kX5, kX6, kX7,
};

// What the rulebook says about one rule ID.
struct RuleInfo {
  RuleId id;
  std::string_view name;     // "B1"
  std::string_view title;    // the rulebook's short title, in our words
  std::string_view section;  // "2. Broker rules"
  bool known_deviation;      // X1-X7: reported apart, never fails a check
};

// Every rule of sections 2 to 9, in rulebook order.
std::span<const RuleInfo> all_rules();

// The rulebook entry of `id`.
const RuleInfo& rule_info(RuleId id);

// "B1", "K5", ...
std::string_view rule_name(RuleId id);

// The RuleId named `name` ("K5"), or nullopt if the rulebook has no such rule.
std::optional<RuleId> parse_rule_id(std::string_view name);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_RULE_ID_H_
