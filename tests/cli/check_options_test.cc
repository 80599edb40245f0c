// `permitcheck check --suite` is the report of `permitcheck-properties` with the same options:
// every option of that binary exists on `check` with the same type, range and default (one
// registration, properties/options.h), is refused outside --suite, and does what it says.
#include <array>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "cli/engines.h"
#include "tests/cli/cli_testing.h"
#include "spec/outcome.h"

namespace permitcheck::cli {
namespace {

using testing::run_permitcheck;
using ::testing::HasSubstr;

// The options of a --help text: "--name" to its type, range and default as CLI11 prints them
// ("INT:INT in [1 - 1000000000]=4000", "UINT=491"; "" for a flag).
std::map<std::string, std::string> help_options(const std::string& help) {
  std::map<std::string, std::string> options;
  const std::regex line(R"(^  (?:-h,)?(--[a-z-]+)( [A-Z]+(?::[A-Z]+ in \[[^\]]*\])?(?:=\S*)?(?=\s|$))?.*$)");
  std::istringstream in(help);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_match(l, m, line)) options[m[1]] = m[2];
  }
  return options;
}

#ifdef PERMITCHECK_PROPERTIES_BIN
// Runs the side binary with `args`; its exit code and standard output.
testing::Run run_properties_binary(const std::string& args) {
  testing::Run r;
  const std::string command = std::string(PERMITCHECK_PROPERTIES_BIN) + " " + args + " 2>/dev/null";
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buffer;
  for (std::size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), p)) > 0;) r.out.append(buffer.data(), n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}
#endif

TEST(CheckSuite, TakesEveryOptionOfPermitcheckPropertiesWithTheSameTypeAndDefault) {
#ifndef PERMITCHECK_PROPERTIES_BIN
  GTEST_SKIP() << "permitcheck-properties is not part of this build";
#else
  const testing::Run side = run_properties_binary("--help");
  ASSERT_EQ(side.code, 0) << side.out;
  const testing::Run check = run_permitcheck({"check", "--help"});
  ASSERT_EQ(check.code, 0) << check.err;
  const std::map<std::string, std::string> side_options = help_options(side.out);
  const std::map<std::string, std::string> check_options = help_options(check.out + check.err);
  ASSERT_GE(side_options.size(), 9u) << side.out;  // --help and the eight report options
  EXPECT_THAT(side_options.at("--find-cases"), HasSubstr("INT in [1 - 1000000000]="));
  for (const auto& [name, text] : side_options) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(check_options.count(name)) << "permitcheck check has no " << name;
    // --cases and --steps are check's own (their range written by IntRange, the default that of
    // the single property; --suite uses the side binary's default, tested below); --out's
    // default is a build path in the side binary and ./counterexamples in check.
    if (name == "--help" || name == "--cases" || name == "--steps" || name == "--out") continue;
    EXPECT_EQ(check_options.at(name), text);
  }
#endif
}

// The same values are refused by both, with exit 2 (the side binary's ranges are check's).
TEST(CheckSuite, RefusesWhatPermitcheckPropertiesRefuses) {
  for (const char* option : {"--cases", "--steps", "--find-cases", "--mutant-cases"}) {
    for (const char* value : {"0", "-3", "1000000001", "x"}) {
      SCOPED_TRACE(std::string(option) + " " + value);
      const testing::Run r = run_permitcheck({"check", "--suite", option, value});
      EXPECT_EQ(r.code, spec::kExitBadInput) << r.out;
      EXPECT_THAT(r.out + r.err, HasSubstr(option));
#ifdef PERMITCHECK_PROPERTIES_BIN
      EXPECT_EQ(run_properties_binary(std::string(option) + " " + value).code, 2);
#endif
    }
  }
}

// The report's own options need --suite, and --suite excludes the single property's.
TEST(CheckSuite, SuiteOptionsNeedSuiteAndExcludeTheSinglePropertysOptions) {
  if (!check_available()) GTEST_SKIP() << "properties not built";
  for (const char* option : {"--no-legacy", "--no-mutants"}) {
    const testing::Run r = run_permitcheck({"check", option});
    EXPECT_EQ(r.code, spec::kExitBadInput) << option;
    EXPECT_THAT(r.out + r.err, HasSubstr("requires --suite")) << option;
  }
  for (const std::vector<std::string>& single :
       {std::vector<std::string>{"--ruleset", "legacy"}, {"--against", "legacy"}, {"--shard", "0/2"},
        {"--coverage"}, {"--format", "json"}, {"--counterexample", "x.jsonl"}}) {
    std::vector<std::string> args = {"check", "--suite"};
    args.insert(args.end(), single.begin(), single.end());
    const testing::Run r = run_permitcheck(args);
    EXPECT_EQ(r.code, spec::kExitBadInput) << single[0];
    EXPECT_THAT(r.out + r.err, HasSubstr("excludes")) << single[0];
  }
}

// --suite runs the report: rev-d passes, legacy fails, every L1-L11 found and written to --out
// (re-checked), the mutation table skipped by --no-mutants; exit 0.
TEST(CheckSuite, RunsTheReportAndWritesTheLegacyTracesToOut) {
  if (!check_available()) GTEST_SKIP() << "properties not built";
  const std::string dir = ::testing::TempDir() + "/check_suite_out";
  std::filesystem::remove_all(dir);
  const testing::Run r = run_permitcheck({"check", "--suite", "--no-mutants", "--cases", "40",
                                          "--find-cases", "600", "--out", dir});
  EXPECT_EQ(r.code, spec::kExitPass) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("== rev-d: the model-based property\nPASS: 40 cases"));
  EXPECT_THAT(r.out, HasSubstr("== legacy: the same property must fail\nfails as expected"));
  EXPECT_THAT(r.out, HasSubstr("not run (this build has no mutants, or --no-mutants)"));
  for (int i = 1; i <= 11; ++i) {
    const std::string file = dir + "/L" + std::to_string(i) + ".jsonl";
    EXPECT_TRUE(std::filesystem::exists(file)) << file;
    EXPECT_THAT(r.out, HasSubstr(file + " (same rule)"));
  }
}

// --no-legacy skips the findings; the mutation table runs on the mutant build, one mutant here
// (PERMITCHECK_MUTANT_FILTER), with --mutant-cases as its budget.
TEST(CheckSuite, NoLegacySkipsTheFindingsAndMutantCasesIsTheBudget) {
  if (!check_available()) GTEST_SKIP() << "properties not built";
  ::setenv("PERMITCHECK_MUTANT_FILTER", "send_at_zero_permits", 1);
  const testing::Run r = run_permitcheck(
      {"check", "--suite", "--no-legacy", "--cases", "20", "--mutant-cases", "400"});
  ::unsetenv("PERMITCHECK_MUTANT_FILTER");
  EXPECT_EQ(r.code, spec::kExitPass) << r.out << r.err;
  // No row of the findings table (a row starts with its id; the legacy property's own
  // failure may carry an L-row's signature).
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("\nL1 ")));
  if (r.out.find("not run (this build has no mutants") == std::string::npos) {
    EXPECT_THAT(r.out, HasSubstr("send_at_zero_permits"));
    EXPECT_THAT(r.out, HasSubstr("killed 1 of 1"));
  }
}

}  // namespace
}  // namespace permitcheck::cli
