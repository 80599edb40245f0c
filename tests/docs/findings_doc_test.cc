// docs/findings/: every bug report names the client's release, a file:line in its released
// source and a rule ID of the rulebook; it has the sections of an upstream issue (with the steps
// on a real Pulsar broker), keeps permitcheck's own vocabulary (ruleset names, test names) out,
// and conformance/README.md and the index link it.
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "spec/rule_id.h"
#include "tests/docs/docs_testing.h"

namespace permitcheck {
namespace {

namespace fs = std::filesystem;

using docs_testing::kSourceDir;
using docs_testing::read_file;

// What a finding lacks; empty when it names a release, a file:line and a rule ID.
std::vector<std::string> finding_problems(const std::string& text) {
  std::vector<std::string> problems;
  // "- **Client and release:** ... 4.2.0 ..." with a version number.
  static const std::regex release(R"(\*\*Client and release:\*\*[^\n]*\bv?\d+\.\d+\.\d+)");
  if (!std::regex_search(text, release)) {
    problems.push_back("no '**Client and release:**' line with a version");
  }
  // "lib/ConsumerImpl.cc:820", "pulsar/internal/commands.go:169" or "src/consumer/engine.rs:176".
  static const std::regex source(R"([A-Za-z_][\w/]*\.(cc|cpp|h|go|java|rs):\d+)");
  if (!std::regex_search(text, source)) problems.push_back("no file:line");
  // "Rule: C7 ..." or "Rules: E2 (...), E5 (...)": at least one ID the rulebook knows.
  static const std::regex rules_sentence(R"(Rules?: ([^\n]*))");
  static const std::regex id(R"(\b[A-Z]\d{1,2}\b)");
  bool known = false;
  for (std::sregex_iterator s(text.begin(), text.end(), rules_sentence), end; s != end; ++s) {
    const std::string sentence = (*s)[1];
    for (std::sregex_iterator m(sentence.begin(), sentence.end(), id); m != end; ++m) {
      known = known || spec::parse_rule_id(m->str()).has_value();
    }
  }
  if (!known) problems.push_back("no 'Rule:' sentence naming a rule ID of the rulebook");
  return problems;
}

// The sections an upstream issue needs, in a client developer's words; empty when all are there.
std::vector<std::string> shape_problems(const std::string& text) {
  std::vector<std::string> problems;
  for (const char* heading : {"## What happens", "## Minimal reproduction", "## Expected",
                              "## Actual", "## Where in the source", "## Suggested fix",
                              "## Reproduce on a real Pulsar broker"}) {
    if (text.find(std::string("\n") + heading) == std::string::npos) {
      problems.push_back(std::string("no '") + heading + "' section");
    }
  }
  // The real-broker steps end in the broker's own stats and wait for measured output.
  const std::size_t real = text.find("\n## Reproduce on a real Pulsar broker");
  if (real != std::string::npos) {
    const std::size_t end = text.find("\n## ", real + 1);
    const std::string section = text.substr(real, end == std::string::npos ? end : end - real);
    if (section.find("availablePermits") == std::string::npos) {
      problems.push_back("the real-broker steps do not read availablePermits");
    }
    if (section.find("permitcheck real-broker") == std::string::npos) {
      problems.push_back("the real-broker steps do not say what confirms them");
    }
  }
  // permitcheck's vocabulary: a ruleset revision, a trace header, a test name such as
  // "CppClient.E5_DecompressionFailure" or "GoClient.DroppedDuplicatesReturnTheirPermits".
  static const std::regex vocabulary(R"(rev-d|"ruleset"|\b[A-Z][A-Za-z0-9]+\.[A-Z][A-Za-z0-9_]{7,}\b)");
  std::smatch m;
  if (std::regex_search(text, m, vocabulary)) {
    problems.push_back("permitcheck's own vocabulary in the report: " + m.str());
  }
  return problems;
}

std::vector<fs::path> findings() {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(kSourceDir / "docs/findings", ec)) {
    if (e.path().extension() == ".md" && e.path().filename() != "README.md") {
      files.push_back(e.path());
    }
  }
  return files;
}

TEST(FindingsDoc, EveryFindingNamesAReleaseASourceLineAndARuleId) {
  const std::vector<fs::path> files = findings();
  ASSERT_FALSE(files.empty()) << "no docs/findings/*.md";
  for (const fs::path& f : files) {
    const std::string text = read_file(f);
    ASSERT_FALSE(text.empty()) << f;
    for (const std::string& p : finding_problems(text)) ADD_FAILURE() << f << ": " << p;
  }
}

TEST(FindingsDoc, EveryFindingHasTheSectionsOfAnUpstreamIssueInAClientDevelopersWords) {
  const std::vector<fs::path> files = findings();
  ASSERT_FALSE(files.empty()) << "no docs/findings/*.md";
  for (const fs::path& f : files) {
    for (const std::string& p : shape_problems(read_file(f))) ADD_FAILURE() << f << ": " << p;
  }
}

TEST(FindingsDoc, EveryFindingIsLinkedFromTheConformanceReadmeAndTheIndex) {
  const std::string readme = read_file(kSourceDir / "conformance/README.md");
  const std::string index = read_file(kSourceDir / "docs/findings/README.md");
  for (const fs::path& f : findings()) {
    const std::string name = f.filename().string();
    EXPECT_NE(readme.find("docs/findings/" + name), std::string::npos)
        << name << " is not linked from conformance/README.md";
    EXPECT_NE(index.find("(" + name + ")"), std::string::npos)
        << name << " is not listed in docs/findings/README.md";
  }
}

TEST(FindingsDoc, TheCheckRejectsAFindingMissingAReleaseASourceLineOrARuleId) {
  const std::string good =
      "Rules: E2 (never over-return).\n- **Client and release:** Go v0.21.0\n"
      "- `pulsar/consumer_partition.go:1519`\n";
  EXPECT_TRUE(finding_problems(good).empty());
  EXPECT_EQ(finding_problems("Rules: E2.\n- `a.go:1`\n").size(), 1u);       // no release
  EXPECT_EQ(finding_problems("Rules: E2.\n- **Client and release:** Go v0.21.0\n"
                             "- `consumer_partition.go` somewhere\n").size(), 1u);  // no line
  EXPECT_EQ(finding_problems("Rules: none.\n- **Client and release:** Go v0.21.0\n"
                             "- `a.go:1`\n").size(), 1u);                    // no rule ID
  EXPECT_EQ(finding_problems("Rule: Z9.\n- **Client and release:** Go v0.21.0\n"
                             "- `a.go:1`\n").size(), 1u);                    // unknown rule ID
}

TEST(FindingsDoc, TheShapeCheckRejectsAMissingSectionUnconfirmedStepsAndTestNames) {
  const std::string good =
      "# t\n## What happens\n## Minimal reproduction\n## Expected\n## Actual\n"
      "## Where in the source\n## Suggested fix\n## Reproduce on a real Pulsar broker\n"
      "read availablePermits; to be confirmed by `permitcheck real-broker` output\n## Impact\n";
  EXPECT_TRUE(shape_problems(good).empty());
  std::string no_expected = good;
  no_expected.erase(no_expected.find("## Expected\n"), 12);
  EXPECT_EQ(shape_problems(no_expected).size(), 1u);
  std::string no_stats = good;
  no_stats.replace(no_stats.find("availablePermits"), 16, "the stats");
  EXPECT_EQ(shape_problems(no_stats).size(), 1u);
  std::string unconfirmed = good;
  unconfirmed.replace(unconfirmed.find("permitcheck real-broker"), 23, "nothing");
  EXPECT_EQ(shape_problems(unconfirmed).size(), 1u);
  EXPECT_EQ(shape_problems(good + "Pinned by CppClient.DecompressionFailureReturnsOne.\n").size(),
            1u);
  EXPECT_EQ(shape_problems(good + "{\"ruleset\":\"rev-d\"}\n").size(), 1u);
  // Source names are not test names.
  EXPECT_TRUE(shape_problems(good + "`ClientCnx.exceptionCaught`, ConsumerImpl.java:1651\n").empty());
}

}  // namespace
}  // namespace permitcheck
