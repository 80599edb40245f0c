// Mechanical rule coverage: every rule ID of spec::all_rules() is named by at least one test
// declared under tests/ or properties/. "Named" is the token rule of cli/test_names.h, the same
// one the selfcheck report uses, so "B10_..." counts for B10 and never for B1.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "cli/test_names.h"
#include "spec/rule_id.h"

namespace permitcheck::spec {
namespace {

namespace fs = std::filesystem;

struct DeclaredTest {
  std::string suite;
  std::string name;
  friend bool operator==(const DeclaredTest&, const DeclaredTest&) = default;
};

// Skips whitespace, then reads an identifier at `pos`; empty if there is none.
std::string_view read_identifier(std::string_view text, std::size_t& pos) {
  while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  const std::size_t start = pos;
  while (pos < text.size() &&
         (std::isalnum(static_cast<unsigned char>(text[pos])) || text[pos] == '_')) {
    ++pos;
  }
  return text.substr(start, pos - start);
}

// Skips whitespace, then consumes `c` if it is next.
bool read_char(std::string_view text, std::size_t& pos, char c) {
  while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  if (pos == text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

// The tests declared in C++ source `text`: TEST, TEST_F, TEST_P, TYPED_TEST(_P), RC_GTEST_PROP
// and RC_GTEST_FIXTURE_PROP at the start of a line (so commented-out declarations and string
// literals do not count); suite and test name may be on different lines.
std::vector<DeclaredTest> declared_tests(std::string_view text) {
  static constexpr std::string_view kMacros[] = {
      "TEST",       "TEST_F", "TEST_P", "TYPED_TEST", "TYPED_TEST_P", "RC_GTEST_PROP",
      "RC_GTEST_FIXTURE_PROP"};
  std::vector<DeclaredTest> tests;
  for (std::size_t line = 0; line < text.size();) {
    const std::size_t eol = text.find('\n', line);
    std::size_t pos = line;
    line = eol == std::string_view::npos ? text.size() : eol + 1;

    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
    if (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) continue;
    const std::string_view macro = read_identifier(text, pos);
    if (std::find(std::begin(kMacros), std::end(kMacros), macro) == std::end(kMacros)) continue;
    if (!read_char(text, pos, '(')) continue;
    const std::string_view suite = read_identifier(text, pos);
    if (suite.empty() || !read_char(text, pos, ',')) continue;
    const std::string_view name = read_identifier(text, pos);
    if (!name.empty()) tests.push_back(DeclaredTest{std::string(suite), std::string(name)});
  }
  return tests;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every *.cc file under `dirs` (those that exist), in path order.
std::vector<fs::path> sources_under(const std::vector<fs::path>& dirs) {
  std::vector<fs::path> files;
  for (const fs::path& dir : dirs) {
    if (!fs::is_directory(dir)) continue;
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir)) {
      if (e.is_regular_file() && e.path().extension() == ".cc") files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool declares(const std::vector<DeclaredTest>& tests, std::string_view rule) {
  return std::any_of(tests.begin(), tests.end(), [rule](const DeclaredTest& t) {
    return cli::names_rule(t.suite, rule) || cli::names_rule(t.name, rule);
  });
}

const fs::path kSourceDir = PERMITCHECK_SOURCE_DIR;

TEST(RuleCoverage, ScannerFindsDeclarationsAtLineStart) {
  const std::string text =
      "#include <gtest/gtest.h>\n"
      "TEST(Broker, B10_FlowIsAdditive) {}\n"
      "  TEST_F(Fixture, Named) {}\n"
      "RC_GTEST_PROP(CommandBudget,\n"
      "              K5_SettlesRest, (int p)) {}\n"
      "TEST_P(Param, K4_Skip) {}\n"
      "RC_GTEST_FIXTURE_PROP(Fix, N3_Scope, ()) {}\n"
      "// TEST(Commented, B1_NotADeclaration)\n"
      "auto s = \"TEST(Literal, B2_NotADeclaration)\";\n"
      "CONTEST(Other, B3_NotADeclaration)\n";
  EXPECT_EQ(declared_tests(text), (std::vector<DeclaredTest>{{"Broker", "B10_FlowIsAdditive"},
                                                             {"Fixture", "Named"},
                                                             {"CommandBudget", "K5_SettlesRest"},
                                                             {"Param", "K4_Skip"},
                                                             {"Fix", "N3_Scope"}}));
}

TEST(RuleCoverage, ScannerFindsThisFilesOwnTests) {
  const fs::path self = kSourceDir / "tests" / "spec" / "rule_coverage_test.cc";
  ASSERT_TRUE(fs::is_regular_file(self)) << self;
  const std::vector<DeclaredTest> tests = declared_tests(read_file(self));
  EXPECT_NE(std::find(tests.begin(), tests.end(),
                      DeclaredTest{"RuleCoverage", "ScannerFindsThisFilesOwnTests"}),
            tests.end());
  // The declarations quoted inside the string literals above are not tests of this file.
  EXPECT_FALSE(declares(tests, "B10"));
}

TEST(RuleCoverage, TokensMatchRuleNamesExactly) {
  auto pins = [](std::string suite, std::string name, std::string_view rule) {
    return declares(std::vector<DeclaredTest>{{std::move(suite), std::move(name)}}, rule);
  };
  EXPECT_TRUE(pins("Broker", "B10_FlowIsAdditive", "B10"));
  EXPECT_FALSE(pins("Broker", "B10_FlowIsAdditive", "B1"));  // B10 is not B1
  EXPECT_TRUE(pins("K5", "SettlesRest", "K5"));              // suite names count too
  EXPECT_TRUE(pins("Budget", "Rest_K5", "K5"));
  EXPECT_FALSE(pins("Budget", "K5SettlesRest", "K5"));  // CamelCase is not split
  EXPECT_FALSE(pins("Budget", "k5_SettlesRest", "K5"));  // case matters
  EXPECT_EQ(cli::name_tokens("Inst/Budget.K5_Rest/0"),
            (std::vector<std::string_view>{"Inst", "Budget", "K5", "Rest", "0"}));
}

TEST(RuleCoverage, EveryRuleIdIsNamedByATest) {
  const std::vector<fs::path> files =
      sources_under({kSourceDir / "tests", kSourceDir / "properties"});
  std::vector<DeclaredTest> tests;
  for (const fs::path& file : files) {
    std::vector<DeclaredTest> found = declared_tests(read_file(file));
    tests.insert(tests.end(), found.begin(), found.end());
  }
  ASSERT_FALSE(tests.empty()) << "no test declarations found under " << kSourceDir;

  std::vector<std::string_view> missing;
  std::string listed;
  for (const RuleInfo& rule : all_rules()) {
    if (declares(tests, rule.name)) continue;
    missing.push_back(rule.name);
    listed.append(" ").append(rule.name);
  }
  EXPECT_TRUE(missing.empty()) << missing.size() << " of " << all_rules().size()
                               << " rule IDs are named by no test (scanned " << files.size()
                               << " files, " << tests.size() << " tests):" << listed;
}

}  // namespace
}  // namespace permitcheck::spec
