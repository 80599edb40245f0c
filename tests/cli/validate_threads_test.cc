// cli/validate.h, validate::ValidateOptions::threads: reading on a second thread while the calling thread
// checks must give exactly the verdict of doing both on one thread — the same events, findings
// (rule, line, text), last line and error — whether the trace ends inside the first block of
// read-ahead events, after many blocks, or at an unreadable line after many blocks.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "validate/validate.h"

namespace permitcheck::cli {
namespace {

std::string findings_text(const std::vector<spec::Finding>& findings) {
  std::string out;
  for (const spec::Finding& f : findings) absl::StrAppend(&out, spec::format_finding(f), "\n");
  return out;
}

// Everything a verdict depends on, as text.
std::string verdict(const std::string& trace, int threads, std::size_t block_events = 8192) {
  validate::ValidateOptions options;
  options.threads = threads;
  options.block_events = block_events;
  std::istringstream in(trace);
  const validate::FileResult r = validate::validate_stream(in, "t", options);
  return absl::StrCat("events ", r.events, ", last line ", r.last_line, ", error ",
                      r.error.value_or("none"), ", families ", r.families.wire, "/",
                      r.families.client, "/", r.families.broker, "/", r.families.extension,
                      "\nviolations:\n", findings_text(r.violations), "deviations:\n",
                      findings_text(r.deviations));
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ValidateThreads, GoldenTracesGetTheSameVerdictOnOneOrTwoThreads) {
  const std::filesystem::path dir =
      std::filesystem::path(PERMITCHECK_SOURCE_DIR) / "tests" / "cli" / "golden";
  int traces = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".jsonl") continue;
    const std::string trace = read_file(entry.path());
    EXPECT_EQ(verdict(trace, 2), verdict(trace, 1)) << entry.path();
    EXPECT_EQ(verdict(trace, 2, /*block_events=*/1), verdict(trace, 1)) << entry.path();
    EXPECT_EQ(verdict(trace, 2, /*block_events=*/3), verdict(trace, 1)) << entry.path();
    ++traces;
  }
  EXPECT_GE(traces, 12);
}

// A client trace of `commands` commands of 4 messages; every 997th command over-returns (E2).
std::string long_trace(int commands) {
  std::string t =
      R"({"trace":"pip491-permits","version":1,"source":"client","ruleset":"rev-d","q":1000,"t":500})"
      "\n"
      R"({"ev":"inc_open","inc":1,"cnx":"c1","consumer":0})"
      "\n"
      R"({"ev":"inc_flow_enabled","inc":1})"
      "\n";
  for (int cmd = 1; cmd <= commands; ++cmd) {
    absl::StrAppend(&t, R"({"ev":"recv","inc":1,"cmd":)", cmd, R"(,"message_permits":4})", "\n");
    absl::StrAppend(&t, R"({"ev":"resolve","cmd":)", cmd, R"(,"p":4,"source":"explicit"})", "\n");
    absl::StrAppend(&t, R"({"ev":"settle","cmd":)", cmd, R"(,"n":)", cmd % 997 == 0 ? 5 : 4,
                    "}\n");
  }
  return t;
}

TEST(ValidateThreads, ManyBlocksWithViolationsGetTheSameVerdict) {
  const std::string trace = long_trace(6000);  // 18,000 events: several read-ahead blocks
  const std::string one = verdict(trace, 1);
  EXPECT_NE(one.find("E2"), std::string::npos) << one;
  EXPECT_EQ(verdict(trace, 2), one);
}

TEST(ValidateThreads, AnUnreadableLineAfterManyBlocksGetsTheSameErrorAndFindings) {
  const std::string trace = long_trace(5000) + "{\"ev\":\"settle\",\"cmd\":1,\"n\":1.5}\n" +
                            R"({"ev":"settle","cmd":2,"n":4})" + "\n";
  const std::string one = verdict(trace, 1);
  EXPECT_NE(one.find("error line 15004: field \"n\""), std::string::npos) << one;
  EXPECT_EQ(verdict(trace, 2), one);
}

}  // namespace
}  // namespace permitcheck::cli
