// One oracle (issue 33): rule verdicts are decided in spec/. Outside spec/ (and tests/), a rule
// constant (`RuleId::kE5`, `spec::RuleId::kM2`) that is not compared against (`==`, `!=`) or a
// `case` label picks a rule for something; each such use counts. A file may hold at most its
// allowance below, each with its reason; a file not listed may hold none. A new verdict outside
// spec/ therefore fails here: decide it in a spec/ function (from facts in the trace, so that
// `permitcheck validate` of a saved counterexample reproduces it) and call that instead.
//
// The allowances only shrink: when a verdict moves into spec/, lower its file's number.
#include <cstddef>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "tests/docs/docs_testing.h"

namespace permitcheck {
namespace {

namespace fs = std::filesystem;

using docs_testing::kSourceDir;
using docs_testing::read_file;

// The rule constants of `text` that choose a rule (comments, comparisons and case labels
// left out).
std::size_t rule_choices(const std::string& text) {
  static const std::regex kConstant(R"((spec::)?RuleId::k[A-Z][A-Z0-9]*)");
  std::size_t n = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (const std::size_t c = line.find("//"); c != std::string::npos) line.resize(c);
    const std::size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 5, "case ") == 0) continue;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), kConstant); it != std::sregex_iterator();
         ++it) {
      std::string before = line.substr(0, static_cast<std::size_t>(it->position()));
      while (!before.empty() && (before.back() == ' ' || before.back() == '\t')) before.pop_back();
      if (before.ends_with("==") || before.ends_with("!=")) continue;
      ++n;
    }
  }
  return n;
}

struct Allowance {
  std::size_t most;
  std::string_view why;
};

// Tables that only NAME rules: they never decide a finding. (No verdict is left outside spec/:
// the conformance judge's are spec/scenario_verdict.h, the harness's spec/driver_verdict.h and
// the model's spec/model_verdict.h.)
const std::map<std::string, Allowance>& allowances() {
  static const auto* const kAllowances = new std::map<std::string, Allowance>{
      {"conformance/scenario.cc", {22, "names each scenario's primary rule"}},
      {"conformance/bug_catalogue.cc", {14, "names the rules each catalogued bug is expected under"}},
      {"properties/runner.cc", {7, "names the rev-d rule each legacy row's counterexample breaks"}},
      {"properties/mutation_test.cc", {4, "a test's expected rule"}},
      {"solver/prove.h", {1, "default of a field the monitor's first violation fills"}},
      {"solver/prove.cc", {1, "fallback of a legacy-catalogue lookup"}},
  };
  return *kAllowances;
}

TEST(RuleVerdicts, TheCounterCountsChoicesAndSkipsComparisonsCaseLabelsAndComments) {
  EXPECT_EQ(rule_choices("  add({.rule = spec::RuleId::kE5, .text = t});\n"), 1u);
  EXPECT_EQ(rule_choices("  v.push_back({\"L7\", RuleId::kE3, 0});\n"), 1u);
  EXPECT_EQ(rule_choices("  return Finding{d > 0 ? RuleId::kE2 : RuleId::kE5, 0, s};\n"), 2u);
  EXPECT_EQ(rule_choices("  if (f.rule == spec::RuleId::kB12 || f.rule != RuleId::kB13) {\n"), 0u);
  EXPECT_EQ(rule_choices("    case spec::RuleId::kK5:\n"), 0u);
  EXPECT_EQ(rule_choices("  x = 1;  // was RuleId::kM2\n"), 0u);
}

TEST(RuleVerdicts, NoRuleIsChosenOutsideSpecBeyondTheAllowances) {
  std::map<std::string, std::size_t> found;
  for (auto it = fs::recursive_directory_iterator(kSourceDir); it != fs::recursive_directory_iterator(); ++it) {
    const std::string rel = it->path().lexically_relative(kSourceDir).generic_string();
    if (it->is_directory()) {
      const std::string top = rel.substr(0, rel.find('/'));
      if (top == "spec" || top == "tests" || top.starts_with("build") || top.starts_with(".")) {
        it.disable_recursion_pending();
      }
      continue;
    }
    if (!rel.ends_with(".cc") && !rel.ends_with(".h")) continue;
    if (const std::size_t n = rule_choices(read_file(it->path())); n > 0) found[rel] = n;
  }
  ASSERT_FALSE(found.empty()) << "no source scanned under " << kSourceDir;  // the tables exist
  for (const auto& [file, n] : found) {
    const auto a = allowances().find(file);
    if (a == allowances().end()) {
      ADD_FAILURE() << file << " chooses a rule " << n << " time(s) outside spec/: decide the "
                    << "finding in a spec/ function and call it";
    } else {
      EXPECT_LE(n, a->second.most) << file << " (" << a->second.why << ") chooses a rule " << n
                                   << " time(s), allowed " << a->second.most;
    }
  }
}

}  // namespace
}  // namespace permitcheck
