// One oracle (issue 33): rule verdicts are decided in spec/. Outside spec/ (and tests/), a
// source that decides which rule a finding is, or whether one is excused, counts a decision
// wherever it
//   - names a rule constant (`RuleId::kE5`), in a comparison and a case label as well;
//   - switches on a rule (`switch (f.rule)`);
//   - builds a finding (`Finding{...}`, `Finding(...)`, `spec::Finding f{...}`, a function
//     returning one) or sets a rule that is not copied from another (`f.rule = pick(e)`);
//   - names a rule by text (`rule_name(f.rule) == "E5"`, `m.rule != "B5"`,
//     `parse_rule_id("E5")`).
// Comments and string literals are left out. Not counted: copying a finding or its rule from
// the monitor (`Finding g = f`, `w.rule = report.violations.front().rule`) and matching one
// finding's rule against another's (`f.rule == rule`, a re-check): those decide no rule.
//
// A file may hold at most its allowance below, each with its reason (tables that only NAME a
// rule); a file not listed may hold none. A new verdict outside spec/ therefore fails here:
// decide it in a spec/ function (from facts in the trace, so that `permitcheck validate` of a
// saved counterexample reproduces it) and call that instead. The allowances only shrink.
#include <cctype>
#include <cstddef>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "tests/docs/docs_testing.h"

namespace permitcheck {
namespace {

namespace fs = std::filesystem;

using docs_testing::kSourceDir;
using docs_testing::read_file;

// `text` with comments and the contents of string and character literals (raw ones too)
// removed, line breaks kept so that line numbers stay.
std::string code_only(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  auto keep_lines = [&out](std::string_view skipped) {
    for (char c : skipped) {
      if (c == '\n') out += '\n';
    }
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (text.substr(i, 2) == "//") {
      const std::size_t end = text.find('\n', i);
      i = end == std::string_view::npos ? text.size() : end;
    } else if (text.substr(i, 2) == "/*") {
      const std::size_t end = text.find("*/", i + 2);
      const std::size_t stop = end == std::string_view::npos ? text.size() : end + 2;
      keep_lines(text.substr(i, stop - i));
      i = stop;
    } else if (c == 'R' && text.substr(i + 1, 1) == "\"" &&
               (i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_'))) {
      const std::size_t open = text.find('(', i + 2);
      if (open == std::string_view::npos) break;
      const std::string close = ")" + std::string(text.substr(i + 2, open - i - 2)) + "\"";
      const std::size_t end = text.find(close, open + 1);
      const std::size_t stop = end == std::string_view::npos ? text.size() : end + close.size();
      out += "\"\"";
      keep_lines(text.substr(i, stop - i));
      i = stop;
    } else if (c == '"' || (c == '\'' && (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1]))))) {
      std::size_t j = i + 1;
      while (j < text.size() && text[j] != c && text[j] != '\n') j += text[j] == '\\' ? 2 : 1;
      out += c;
      out += c;
      i = j + 1;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

struct Decision {
  std::size_t line;   // 1-based
  std::string what;   // "rule constant", ...
};

// The rule decisions of a source `text` (see the top of this file).
std::vector<Decision> rule_decisions(std::string_view text) {
  static const auto* const kPatterns = new std::vector<std::pair<std::string, std::regex>>{
      {"rule constant", std::regex(R"(\bRuleId::k[A-Z][A-Z0-9]*)")},
      {"switch on a rule", std::regex(R"(\bswitch\s*\([^)]*\brule\s*\))")},
      {"builds a Finding", std::regex(R"(\bFinding\s*[{(]|\bFinding\s+[A-Za-z_]\w*\s*[{(])")},
      {"sets a rule", std::regex(R"([\w)\]](\.|->)rule\s*=(?!=)(?![^;,}]*\brule\b))")},
      {"names a rule by text",
       std::regex(R"(rule_name\s*\([^()]*(\([^()]*\))?[^()]*\)\s*[!=]=|[!=]=\s*(spec::)?rule_name\s*\()"
                  R"(|\brule\s*[!=]=\s*""|""\s*[!=]=\s*[\w.>-]*\brule\b|parse_rule_id\s*\(\s*"")")},
  };
  std::vector<Decision> out;
  std::istringstream lines(code_only(text));
  std::size_t n = 0;
  for (std::string line; std::getline(lines, line);) {
    ++n;
    for (const auto& [what, pattern] : *kPatterns) {
      for (auto it = std::sregex_iterator(line.begin(), line.end(), pattern); it != std::sregex_iterator();
           ++it) {
        out.push_back({n, what});
      }
    }
  }
  return out;
}

// The kinds of decision found in `snippet`, in order ("" for none).
std::string decisions_in(std::string_view snippet) {
  std::string out;
  for (const Decision& d : rule_decisions(snippet)) out += (out.empty() ? "" : ", ") + d.what;
  return out;
}

struct Allowance {
  std::size_t most;
  std::string_view why;
};

// Tables that only NAME rules: they never decide a finding. (No verdict is left outside spec/:
// the conformance judge's are spec/scenario_verdict.h, the harness's spec/driver_verdict.h,
// spec/driver_excuse.h and spec/bug_signature.h, the model's spec/model_verdict.h, the legacy
// rows' rules spec/legacy_catalogue.h.)
const std::map<std::string, Allowance>& allowances() {
  static const auto* const kAllowances = new std::map<std::string, Allowance>{
      {"conformance/scenario.cc", {22, "the scenario table: each scenario's primary rule"}},
      {"conformance/bug_catalogue.cc", {14, "the bug table: the rules each catalogued bug is expected under"}},
      {"properties/mutation_test.cc", {6, "a test: the rules it expects, the mutants it picks by rule"}},
      {"solver/prove.h", {1, "default of a field the monitor's first violation fills"}},
  };
  return *kAllowances;
}

TEST(RuleVerdicts, TheScannerCatchesEveryWayOfDecidingARuleOutsideSpec) {
  // The classifications properties/harness.cc made before spec/bug_signature.h and
  // spec/driver_excuse.h: a switch over the finding's rule, case labels, comparisons.
  EXPECT_EQ(decisions_in("  switch (f.rule) {\n    case spec::RuleId::kK5:\n"),
            "switch on a rule, rule constant");
  EXPECT_EQ(decisions_in("  if (f.rule == spec::RuleId::kB12 || f.rule != RuleId::kB13) {\n"),
            "rule constant, rule constant");
  EXPECT_EQ(decisions_in("  add({.rule = spec::RuleId::kE5, .text = t});\n"), "rule constant");
  EXPECT_EQ(decisions_in("  return Finding{d > 0 ? RuleId::kE2 : RuleId::kE5, 0, s};\n"),
            "rule constant, rule constant, builds a Finding");
  // validate/report.cc built one to format it.
  EXPECT_EQ(decisions_in("  return finding_object(spec::Finding{rule, line, std::string(text)});\n"),
            "builds a Finding");
  EXPECT_EQ(decisions_in("  spec::Finding f{rule_of(e), line, text};\n"), "builds a Finding");
  EXPECT_EQ(decisions_in("  spec::Finding f;\n  f.rule = pick(e);\n"), "sets a rule");
  EXPECT_EQ(decisions_in("  out->rule = spec::parse_rule_id(\"E5\").value();\n"),
            "sets a rule, names a rule by text");
  EXPECT_EQ(decisions_in("  if (spec::rule_name(f.rule) == \"E5\") excuse = true;\n"),
            "names a rule by text");
  EXPECT_EQ(decisions_in("  if (m.rule != \"B5\") continue;\n"), "names a rule by text");
}

TEST(RuleVerdicts, TheScannerLeavesCopiesMatchesCommentsAndTextsAlone) {
  EXPECT_EQ(decisions_in("  for (const spec::Finding& f : monitor.violations()) out.push_back(f);\n"), "");
  EXPECT_EQ(decisions_in("  spec::Finding g = f;\n  g.explanation += where;\n"), "");
  EXPECT_EQ(decisions_in("  w.rule = report.violations.front().rule;\n"), "");
  EXPECT_EQ(decisions_in("  if (f.rule == rule && f.line == line) return true;\n"), "");
  EXPECT_EQ(decisions_in("  on_finding_(WireFinding{.finding = g, .time = t});\n"), "");
  EXPECT_EQ(decisions_in("  x = 1;  // was RuleId::kM2, switch (f.rule)\n"), "");
  EXPECT_EQ(decisions_in("  /* Finding{RuleId::kM2}\n  */ y = 2;\n"), "");
  EXPECT_EQ(decisions_in("  out << \"RuleId::kM2 Finding{\" << R\"(switch (f.rule))\";\n"), "");
  EXPECT_EQ(decisions_in("  std::string name(spec::rule_name(f.rule));\n"), "");
}

TEST(RuleVerdicts, TheScannerCountsByLine) {
  const std::vector<Decision> d = rule_decisions("a();\n// RuleId::kE1\nb(RuleId::kE2);\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].line, 3u);
}

TEST(RuleVerdicts, NoRuleIsDecidedOutsideSpecBeyondTheAllowances) {
  std::map<std::string, std::vector<Decision>> found;
  std::size_t scanned = 0;
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
    ++scanned;
    if (std::vector<Decision> d = rule_decisions(read_file(it->path())); !d.empty()) found[rel] = std::move(d);
  }
  ASSERT_GT(scanned, 100u) << "no sources scanned under " << kSourceDir;
  ASSERT_FALSE(found.empty()) << "the allowed tables were not found under " << kSourceDir;
  for (const auto& [file, decisions] : found) {
    std::string where;
    for (const Decision& d : decisions) {
      where += (where.empty() ? "" : "; ") + file + ":" + std::to_string(d.line) + " " + d.what;
    }
    const auto a = allowances().find(file);
    if (a == allowances().end()) {
      ADD_FAILURE() << file << " decides a rule " << decisions.size() << " time(s) outside spec/ ("
                    << where << "): decide the finding in a spec/ function and call it";
    } else {
      EXPECT_LE(decisions.size(), a->second.most)
          << file << " (" << a->second.why << ") decides a rule " << decisions.size()
          << " time(s), allowed " << a->second.most << " (" << where << ")";
    }
  }
}

}  // namespace
}  // namespace permitcheck
