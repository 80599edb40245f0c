// A test's name carries only the rule IDs its test exercises (docs/architecture.md, "Test
// names"). RuleCoverage and `permitcheck selfcheck` count a test for every rule-ID token of its
// name, so a token the test does not exercise inflates the coverage they report. This test
// checks every test name against a mechanical proxy of "exercises":
//
//   - the tests: every TEST, TEST_F, TEST_P, TYPED_TEST(_P), RC_GTEST_PROP and
//     RC_GTEST_FIXTURE_PROP declared at the start of a line in a .cc file under tests/ or
//     properties/, and every CTest test of a CMakeLists.txt (add_test(NAME n ...), and the calls
//     of a function of that file that wraps add_test with its first argument in the name);
//   - a name's tokens: suite and test name split on every character that is not an ASCII
//     letter or digit (cli/test_names.h, the split RuleCoverage and selfcheck use);
//   - a rule-ID token: a token that is a rule of spec::all_rules() (K5, B12), a legacy row of
//     spec::legacy_catalogue() (L6) or a review finding F1-F6 (rulebook section 11);
//   - the body: for a C++ test, the text between the braces of its body; for a CTest test, the
//     text of its add_test (or wrapper) call and of the set_tests_properties calls naming it,
//     the name itself blanked out;
//   - exercised: the body contains the ID as a whole word, bare ("K5", "L6.jsonl", K5 in a
//     comment) or as the RuleId enumerator (kK5): the character before it (or before the "k")
//     and the one after it are not ASCII letters or digits.
//
// A name failing the proxy is fixed by renaming the test, not by mentioning the ID in its body.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "cli/test_names.h"
#include "spec/legacy_catalogue.h"
#include "spec/rule_id.h"
#include "tests/docs/docs_testing.h"

namespace permitcheck {
namespace {

namespace fs = std::filesystem;

using docs_testing::kSourceDir;
using docs_testing::read_file;

struct NamedTest {
  std::string where;  // "tests/spec/ack_set_test.cc:12"
  std::string name;   // "AckSet.B2_Layout" or "cli.help"
  std::string body;
};

bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// The rule-ID tokens: spec::all_rules(), the legacy rows, the review findings.
std::set<std::string> rule_id_tokens() {
  std::set<std::string> ids;
  for (const spec::RuleInfo& r : spec::all_rules()) ids.emplace(r.name);
  for (const spec::CatalogueEntry& e : spec::legacy_catalogue()) ids.emplace(e.id);
  for (const char* f : {"F1", "F2", "F3", "F4", "F5", "F6"}) ids.emplace(f);
  return ids;
}

// Whether `body` exercises `id` by the proxy above.
bool mentions(std::string_view body, std::string_view id) {
  for (std::size_t pos = body.find(id); pos != std::string_view::npos; pos = body.find(id, pos + 1)) {
    std::size_t start = pos;
    if (start > 0 && body[start - 1] == 'k') --start;  // RuleId::kK5
    const bool before_ok = start == 0 || !alnum(body[start - 1]);
    const std::size_t end = pos + id.size();
    const bool after_ok = end == body.size() || !alnum(body[end]);
    if (before_ok && after_ok) return true;
  }
  return false;
}

// The position just past the string, character or raw-string literal or the comment that
// starts at `pos`, or `pos` when none starts there.
std::size_t skip_literal(std::string_view t, std::size_t pos) {
  if (t.compare(pos, 2, "//") == 0) {
    const std::size_t eol = t.find('\n', pos);
    return eol == std::string_view::npos ? t.size() : eol;
  }
  if (t.compare(pos, 2, "/*") == 0) {
    const std::size_t end = t.find("*/", pos + 2);
    return end == std::string_view::npos ? t.size() : end + 2;
  }
  if (t.compare(pos, 2, "R\"") == 0 && (pos == 0 || !alnum(t[pos - 1]))) {
    const std::size_t open = t.find('(', pos + 2);
    if (open == std::string_view::npos) return t.size();
    const std::string close = ")" + std::string(t.substr(pos + 2, open - pos - 2)) + "\"";
    const std::size_t end = t.find(close, open);
    return end == std::string_view::npos ? t.size() : end + close.size();
  }
  if (t[pos] == '"' || (t[pos] == '\'' && (pos == 0 || !alnum(t[pos - 1])))) {
    const char quote = t[pos];
    std::size_t i = pos + 1;
    while (i < t.size() && t[i] != quote && t[i] != '\n') i += t[i] == '\\' ? 2 : 1;
    return std::min(i + 1, t.size());
  }
  return pos;
}

// The index of the bracket closing the one at `open` ('(' or '{'), literals and comments
// skipped; npos when it is not closed.
std::size_t matching(std::string_view t, std::size_t open) {
  const char o = t[open];
  const char c = o == '(' ? ')' : '}';
  int depth = 0;
  for (std::size_t i = open; i < t.size();) {
    const std::size_t next = skip_literal(t, i);
    if (next != i) {
      i = next;
      continue;
    }
    if (t[i] == o) ++depth;
    if (t[i] == c && --depth == 0) return i;
    ++i;
  }
  return std::string_view::npos;
}

std::string identifier_at(std::string_view t, std::size_t& pos) {
  while (pos < t.size() && std::isspace(static_cast<unsigned char>(t[pos]))) ++pos;
  const std::size_t start = pos;
  while (pos < t.size() && (alnum(t[pos]) || t[pos] == '_')) ++pos;
  return std::string(t.substr(start, pos - start));
}

int line_of(std::string_view t, std::size_t pos) {
  return 1 + static_cast<int>(std::count(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

// The C++ tests declared in `text` (of file `file`), each with its body.
std::vector<NamedTest> cc_tests(const std::string& file, std::string_view text) {
  static const std::set<std::string> kMacros = {"TEST",         "TEST_F",        "TEST_P",
                                                "TYPED_TEST",   "TYPED_TEST_P",  "RC_GTEST_PROP",
                                                "RC_GTEST_FIXTURE_PROP"};
  std::vector<NamedTest> tests;
  for (std::size_t line = 0; line < text.size();) {
    std::size_t pos = line;
    const std::size_t eol = text.find('\n', line);
    line = eol == std::string_view::npos ? text.size() : eol + 1;
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
    const std::size_t decl = pos;
    if (pos == text.size() || !std::isalpha(static_cast<unsigned char>(text[pos]))) continue;
    if (!kMacros.count(identifier_at(text, pos))) continue;
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    if (pos == text.size() || text[pos] != '(') continue;
    const std::size_t close = matching(text, pos);
    ++pos;
    const std::string suite = identifier_at(text, pos);
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    if (suite.empty() || pos == text.size() || text[pos] != ',') continue;
    ++pos;
    const std::string name = identifier_at(text, pos);
    if (name.empty() || close == std::string_view::npos) continue;
    const std::size_t open = text.find_first_not_of(" \t\n", close + 1);
    if (open == std::string_view::npos || text[open] != '{') continue;
    const std::size_t end = matching(text, open);
    if (end == std::string_view::npos) continue;
    tests.push_back({file + ":" + std::to_string(line_of(text, decl)), suite + "." + name,
                     std::string(text.substr(open, end - open + 1))});
  }
  return tests;
}

// The text of every call `command(...)` in CMake `text`, with the offset of each.
std::vector<std::pair<std::size_t, std::string_view>> cmake_calls(std::string_view text,
                                                                  std::string_view command) {
  std::vector<std::pair<std::size_t, std::string_view>> calls;
  const std::string head = std::string(command) + "(";
  for (std::size_t pos = text.find(head); pos != std::string_view::npos; pos = text.find(head, pos + 1)) {
    if (pos > 0 && (alnum(text[pos - 1]) || text[pos - 1] == '_')) continue;
    std::size_t depth = 0, end = pos + command.size();
    for (; end < text.size(); ++end) {
      if (text[end] == '(') ++depth;
      if (text[end] == ')' && --depth == 0) break;
    }
    calls.emplace_back(pos, text.substr(pos, end - pos + 1));
  }
  return calls;
}

// The first argument of a CMake call's text ("add_test(NAME x ...)" -> "NAME").
std::string first_argument(std::string_view call, std::size_t skip = 0) {
  std::istringstream in(std::string(call.substr(call.find('(') + 1)));
  std::string word;
  for (std::size_t i = 0; i <= skip && in >> word;) ++i;
  return word;
}

// The CTest tests of a CMakeLists.txt: add_test(NAME n ...) and the calls of the file's
// functions that wrap add_test; the body adds the set_tests_properties calls naming the test.
std::vector<NamedTest> cmake_tests(const std::string& file, std::string_view text) {
  std::vector<NamedTest> tests;
  const auto properties = cmake_calls(text, "set_tests_properties");
  auto add = [&](std::size_t pos, std::string name, std::string_view call) {
    std::string body(call);
    for (const auto& [p, c] : properties) {
      const std::size_t at = c.find(name);
      const std::size_t after = at + name.size();
      if (at != std::string_view::npos && after < c.size() && (c[after] == ' ' || c[after] == '\n')) {
        body.append("\n").append(c);
      }
    }
    // The name itself is not the body: every occurrence of it is blanked out.
    for (std::size_t at = body.find(name); at != std::string::npos; at = body.find(name, at)) {
      body.replace(at, name.size(), " ");
    }
    tests.push_back({file + ":" + std::to_string(line_of(text, pos)), std::move(name), body});
  };
  // Functions wrapping add_test: their calls are tests, the add_test inside is not.
  std::vector<std::pair<std::size_t, std::size_t>> definitions;
  for (const auto& [pos, fn] : cmake_calls(text, "function")) {
    const std::size_t end = text.find("endfunction", pos);
    if (end == std::string_view::npos) continue;
    definitions.emplace_back(pos, end);
    if (text.substr(pos, end - pos).find("add_test(NAME") == std::string_view::npos) continue;
    for (const auto& [call_pos, call] : cmake_calls(text, first_argument(fn))) {
      add(call_pos, first_argument(call), call);
    }
  }
  for (const auto& [pos, call] : cmake_calls(text, "add_test")) {
    const bool in_definition = std::any_of(definitions.begin(), definitions.end(), [pos = pos](const auto& d) {
      return pos > d.first && pos < d.second;
    });
    if (in_definition || first_argument(call) != "NAME") continue;
    add(pos, first_argument(call, 1), call);
  }
  return tests;
}

std::vector<NamedTest> every_test() {
  std::vector<NamedTest> tests;
  std::vector<fs::path> files;
  for (const char* dir : {"tests", "properties"}) {
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(kSourceDir / dir)) {
      if (e.is_regular_file() && e.path().extension() == ".cc") files.push_back(e.path());
    }
  }
  // Every CMakeLists.txt of the source tree; build directories, hidden ones and installed
  // clients (node_modules, target) are not part of it.
  for (auto it = fs::recursive_directory_iterator(kSourceDir); it != fs::recursive_directory_iterator(); ++it) {
    const std::string leaf = it->path().filename().string();
    if (it->is_directory() && (leaf.rfind("build", 0) == 0 || leaf.rfind(".", 0) == 0 ||
                               leaf == "node_modules" || leaf == "target")) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && leaf == "CMakeLists.txt") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    const std::string rel = fs::relative(f, kSourceDir).generic_string();
    const std::string text = read_file(f);
    std::vector<NamedTest> found =
        f.extension() == ".cc" ? cc_tests(rel, text) : cmake_tests(rel, text);
    tests.insert(tests.end(), found.begin(), found.end());
  }
  return tests;
}

// The rule-ID tokens of `name` that `body` does not exercise.
std::vector<std::string> unexercised(const std::set<std::string>& ids, const NamedTest& t) {
  std::vector<std::string> missing;
  for (std::string_view token : cli::name_tokens(t.name)) {
    if (ids.count(std::string(token)) && !mentions(t.body, token)) missing.emplace_back(token);
  }
  return missing;
}

TEST(TestNames, MentionIsAWholeWordOrTheEnumerator) {
  EXPECT_TRUE(mentions(R"(EXPECT_EQ(v.rule, "K5");)", "K5"));
  EXPECT_TRUE(mentions("EXPECT_EQ(v.rule, RuleId::kK5);", "K5"));
  EXPECT_TRUE(mentions("read(\"L6.jsonl\")", "L6"));
  EXPECT_TRUE(mentions("// K5: the terminal transition", "K5"));
  EXPECT_FALSE(mentions("RuleId::kB12", "B1"));  // B12 is not B1
  EXPECT_FALSE(mentions("K5SettlesRest", "K5"));
  EXPECT_FALSE(mentions("check_kk5()", "K5"));
  EXPECT_FALSE(mentions("AK5", "K5"));
}

TEST(TestNames, ScannerFindsBodiesOfEachDeclarationKind) {
  const std::string text =
      "TEST(Budget, K5_Settles) { f(\"}\"); expect(RuleId::kK5); }\n"
      "RC_GTEST_PROP(Budget,\n  K6_Direct, (int p)) {\n  // K6\n}\n"
      "  TEST_F(Fixture, B2_Layout) { auto s = R\"({\"a\": 1})\"; }\n"
      "// TEST(Commented, B1_NotADeclaration) {}\n";
  const std::vector<NamedTest> tests = cc_tests("x.cc", text);
  ASSERT_EQ(tests.size(), 3u);
  EXPECT_EQ(tests[0].name, "Budget.K5_Settles");
  EXPECT_EQ(tests[0].body, "{ f(\"}\"); expect(RuleId::kK5); }");
  EXPECT_EQ(tests[1].name, "Budget.K6_Direct");
  EXPECT_EQ(tests[1].where, "x.cc:2");
  EXPECT_EQ(tests[2].name, "Fixture.B2_Layout");
  const std::set<std::string> ids = rule_id_tokens();
  EXPECT_TRUE(unexercised(ids, tests[0]).empty());
  EXPECT_TRUE(unexercised(ids, tests[1]).empty());
  EXPECT_EQ(unexercised(ids, tests[2]), std::vector<std::string>{"B2"});
}

TEST(TestNames, ScannerFindsCTestNamesAndWrapperCalls) {
  const std::string text =
      "function(my_test name expected)\n  add_test(NAME cli.${name} COMMAND x ${ARGN})\n"
      "endfunction()\n"
      "my_test(K5_exit 1 validate k5.jsonl)\n"
      "add_test(NAME cli.L6_replay COMMAND permitcheck replay ${golden}/L6.jsonl)\n"
      "add_test(NAME cli.E3_render COMMAND permitcheck render x.jsonl)\n"
      "set_tests_properties(cli.E3_render PROPERTIES PASS_REGULAR_EXPRESSION \"E3 \")\n";
  const std::vector<NamedTest> tests = cmake_tests("CMakeLists.txt", text);
  ASSERT_EQ(tests.size(), 3u);
  const std::set<std::string> ids = rule_id_tokens();
  EXPECT_EQ(tests[0].name, "K5_exit");
  EXPECT_EQ(unexercised(ids, tests[0]), std::vector<std::string>{"K5"});  // k5.jsonl is not K5
  EXPECT_EQ(tests[1].name, "cli.L6_replay");
  EXPECT_TRUE(unexercised(ids, tests[1]).empty());
  EXPECT_EQ(tests[2].name, "cli.E3_render");
  EXPECT_TRUE(unexercised(ids, tests[2]).empty());  // through its set_tests_properties
}

TEST(TestNames, EveryRuleIdInATestNameIsExercisedByItsBody) {
  const std::set<std::string> ids = rule_id_tokens();
  const std::vector<NamedTest> tests = every_test();
  ASSERT_GT(tests.size(), 500u) << "the scanner found too few tests under " << kSourceDir;
  const auto ctest = std::count_if(tests.begin(), tests.end(), [](const NamedTest& t) {
    return t.where.find("CMakeLists.txt") != std::string::npos;
  });
  ASSERT_GT(ctest, 50) << "the scanner found too few CTest tests";
  std::string offending;
  int count = 0;
  for (const NamedTest& t : tests) {
    const std::vector<std::string> missing = unexercised(ids, t);
    if (missing.empty()) continue;
    ++count;
    offending.append("\n  ").append(t.where).append(" ").append(t.name).append(":");
    for (const std::string& m : missing) offending.append(" ").append(m);
  }
  EXPECT_EQ(count, 0) << count << " test name(s) carry a rule ID their body does not exercise "
                      << "(rename the test; docs/architecture.md, \"Test names\"):" << offending;
}

}  // namespace
}  // namespace permitcheck
