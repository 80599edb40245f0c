// One name and one default per idea across subcommands (issue 35, docs/cli.md "One name and one
// default per idea"): the trace to write is --trace-out (validate of a capture, tap), its old
// spellings still work with one warning line; the seed and the idle have one default each, and
// the runs print the values they used.
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_testing.h"

namespace permitcheck::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string temp(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("permitcheck-names-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

// A pcap with its global header and no packet: validate reads it as a capture (nothing in it).
std::string empty_capture() {
  const std::string path = temp("empty.pcap");
  const unsigned char header[24] = {0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0,
                                    0,    0,    0,    0,    0xff, 0xff, 0, 0, 1, 0, 0, 0};
  testing::write_file(path, std::string(reinterpret_cast<const char*>(header), sizeof header));
  return path;
}

// Both spellings write the same file; only the old one warns, in one line.
TEST(OptionNames, ValidateTraceOutAndItsOldSpellingEmitTraceWriteTheTrace) {
  const std::string capture = empty_capture();
  for (const std::string& spelling : {"--trace-out", "--emit-trace"}) {
    const std::string out = temp("wire" + spelling + ".jsonl");
    std::filesystem::remove(out);
    const testing::Run r = testing::run_permitcheck({"validate", spelling, out, capture});
    EXPECT_EQ(r.code, 2) << r.err;  // the capture has no Pulsar connection: nothing checked
    EXPECT_THAT(testing::read_file(out), HasSubstr("\"source\":\"wire\"")) << spelling;
    const std::string warning =
        "permitcheck validate: --emit-trace is deprecated: use --trace-out (same meaning)\n";
    if (spelling == "--emit-trace") {
      EXPECT_THAT(r.err, HasSubstr(warning));
      EXPECT_EQ(r.err.find("deprecated"), r.err.rfind("deprecated")) << "one warning line";
    } else {
      EXPECT_THAT(r.err, Not(HasSubstr("deprecated"))) << r.err;
    }
    std::filesystem::remove(out);
  }
  std::filesystem::remove(capture);
}

// The tap opens its trace before it listens: an unwritable path names the option by its new
// name under either spelling, and the old spelling warns.
TEST(OptionNames, TapTraceOutAndItsOldSpellingTraceAreOneOption) {
  for (const std::string& spelling : {"--trace-out", "--trace"}) {
    const testing::Run r = testing::run_permitcheck(
        {"tap", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1", spelling,
         "/nonexistent-dir/tap.jsonl"});
    if (r.err.find("not built in this configuration") != std::string::npos) GTEST_SKIP();
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("--trace-out: cannot write /nonexistent-dir/tap.jsonl"));
    EXPECT_EQ(r.err.find("--trace is deprecated: use --trace-out") != std::string::npos,
              spelling == "--trace")
        << r.err;
  }
}

TEST(OptionNames, GivingANameAndItsOldSpellingTogetherIsAUsageError) {
  const testing::Run r = testing::run_permitcheck(
      {"validate", "--trace-out", temp("a.jsonl"), "--emit-trace", temp("b.jsonl"),
       testing::source_dir() + "/docs/examples/client-pass.jsonl"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--emit-trace and --trace-out are one option"));
}

TEST(OptionNames, OldSpellingsAreHiddenFromHelpAndTheNewOnesShown) {
  const testing::Run v = testing::run_permitcheck({"validate", "--help"});
  EXPECT_THAT(v.out, HasSubstr("--trace-out"));
  EXPECT_THAT(v.out, Not(HasSubstr("--emit-trace")));
  const testing::Run t = testing::run_permitcheck({"tap", "--help"});
  EXPECT_THAT(t.out, HasSubstr("--trace-out"));
  EXPECT_THAT(t.out, Not(HasSubstr("--trace ")));
}

// The default an option has in `cmd --help` ("--seed UINT=491"), or "" when absent.
std::string help_default(const std::string& cmd, const std::string& option) {
  const testing::Run r = testing::run_permitcheck({cmd, "--help"});
  const std::regex re("\\n *" + option + " [A-Z]+(?::[^=\\n ]*(?: in \\[[^\\]]*\\])?)?=([^ \\n]+)");
  std::smatch m;
  return std::regex_search(r.out, m, re) ? m[1].str() : "";
}

TEST(OptionDefaults, TheSeedIsOneValueInEverySubcommandThatDrawsCases) {
  for (const std::string cmd : {"conform", "matrix", "check", "review"}) {
    const testing::Run r = testing::run_permitcheck({cmd, "--help"});
    if (r.out.find("--seed") == std::string::npos) continue;  // not built here
    EXPECT_EQ(help_default(cmd, "--seed"), "491") << cmd << ":\n" << r.out;
  }
}

TEST(OptionDefaults, TheIdleIsOneValueInEverySubcommandThatWaitsForQuiescence) {
  for (const std::string cmd : {"conform", "matrix", "tap", "validate"}) {
    EXPECT_EQ(help_default(cmd, "--idle"), "1.5") << cmd;
  }
}

// validate of a capture prints the idle it used (text header and JSON), so the run repeats.
TEST(OptionDefaults, ValidateOfACapturePrintsItsIdle) {
  const std::string capture = empty_capture();
  EXPECT_THAT(testing::run_permitcheck({"validate", capture}).out, HasSubstr(", idle 1.5 s,"));
  const testing::Run json =
      testing::run_permitcheck({"validate", "--format", "json", "--idle", "0.3", capture});
  EXPECT_THAT(json.out, HasSubstr("\"idle_seconds\":0.3"));
  std::filesystem::remove(capture);
}

}  // namespace
}  // namespace permitcheck::cli
