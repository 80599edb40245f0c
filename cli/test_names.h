// Test names and the rules they pin.
//
// A test pins rule R when R's name ("B1") is one of the tokens of its suite or test name.
// Tokens are the maximal runs of ASCII letters and digits: '_', '/', '.' and every other
// character separate them, and CamelCase is not split. So "K5_SettlesRest" pins K5,
// "B10_FlowIsAdditive" pins B10 but not B1, and "K5SettlesRest" pins nothing.
//
//   name_tokens("CommandBudget.K5_SettlesRest");  // {"CommandBudget", "K5", "SettlesRest"}
//   names_rule("Broker.B10_Additive", "B1");      // false
//   names_rule("Broker.B10_Additive", "B10");     // true
//
// Header-only and dependency-free: the selfcheck report and the rule-coverage test share it,
// so both count a test for the same rules.
#ifndef PERMITCHECK_CLI_TEST_NAMES_H_
#define PERMITCHECK_CLI_TEST_NAMES_H_

#include <algorithm>
#include <string_view>
#include <vector>

namespace permitcheck::cli {

// The tokens of `name`, in order; views into `name`.
inline std::vector<std::string_view> name_tokens(std::string_view name) {
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  std::vector<std::string_view> tokens;
  std::size_t i = 0;
  while (i < name.size()) {
    while (i < name.size() && !alnum(name[i])) ++i;
    std::size_t start = i;
    while (i < name.size() && alnum(name[i])) ++i;
    if (i > start) tokens.push_back(name.substr(start, i - start));
  }
  return tokens;
}

// True when `rule` ("B1") is exactly one of the tokens of `name` (case-sensitive).
inline bool names_rule(std::string_view name, std::string_view rule) {
  std::vector<std::string_view> tokens = name_tokens(name);
  return std::find(tokens.begin(), tokens.end(), rule) != tokens.end();
}

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_TEST_NAMES_H_
