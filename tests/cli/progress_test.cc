// The progress line of long work (cli/progress.h): shown only when enabled, one rewritten line
// or whole lines, an estimate of the time left, nothing on a report; and the subcommands that use
// it (prove, check) write it with --progress and never without it off a terminal.
#include "cli/progress.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_testing.h"

namespace permitcheck::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

struct FakeClock {
  std::chrono::steady_clock::time_point now{};
  ProgressLine::Clock fn() {
    return [this] { return now; };
  }
};

TEST(ProgressLine, DisabledWritesNothing) {
  std::ostringstream err;
  {
    ProgressLine line(err, "prove", "checks", /*enabled=*/false);
    line.update(0, 3, "conservation running");
    line.update(3, 3);
    line.finish();
  }
  EXPECT_EQ(err.str(), "");
}

TEST(ProgressLine, GivesDoneTotalElapsedAndTimeLeft) {
  FakeClock clock;
  std::ostringstream err;
  ProgressLine line(err, "conform", "scenarios", true, ProgressLine::Style::kLines, clock.fn());
  clock.now += 30s;
  line.update(1, 4);
  clock.now += 30s;
  line.update(4, 4);
  EXPECT_EQ(err.str(),
            "conform: 1/4 scenarios done, 0:30 elapsed, about 1:30 left\n"
            "conform: 4/4 scenarios done, 1:00 elapsed\n");
}

TEST(ProgressLine, NamesWhatRunsNextAndGivesNoEstimateBeforeTheFirstUnit) {
  FakeClock clock;
  std::ostringstream err;
  ProgressLine line(err, "prove", "checks", true, ProgressLine::Style::kLines, clock.fn());
  line.update(0, 2, "conservation running");
  EXPECT_EQ(err.str(), "prove: 0/2 checks done, 0:00 elapsed (conservation running)\n");
}

TEST(ProgressLine, RewritesOneLineAtMostEveryTenthOfASecondAndEndsItOnce) {
  FakeClock clock;
  std::ostringstream err;
  {
    ProgressLine line(err, "check", "cases", true, ProgressLine::Style::kRewrite, clock.fn());
    line.update(1, 100);
    clock.now += 10ms;
    line.update(2, 100);  // too soon: not shown
    clock.now += 100ms;
    line.update(3, 100);
    line.update(100, 100);  // the last is always shown
    line.finish();
  }  // the destructor does not end the line a second time
  const std::string s = err.str();
  EXPECT_THAT(s, HasSubstr("\r\033[Kcheck: 1/100 cases done"));
  EXPECT_THAT(s, Not(HasSubstr("2/100")));
  EXPECT_THAT(s, HasSubstr("\r\033[Kcheck: 3/100 cases done"));
  EXPECT_THAT(s, HasSubstr("\r\033[Kcheck: 100/100 cases done, 0:00 elapsed\n"));
  EXPECT_EQ(s.back(), '\n');
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 1);
}

TEST(ProgressWanted, FollowsTheTerminalUnlessForced) {
  EXPECT_TRUE(progress_wanted(false, false, true));
  EXPECT_FALSE(progress_wanted(false, false, false));
  EXPECT_TRUE(progress_wanted(true, false, false));
  EXPECT_FALSE(progress_wanted(false, true, true));
}

TEST(CheckProgress, WritesCasesDoneWithProgressAndNothingOffATerminalWithout) {
  const testing::Run with = testing::run_permitcheck({"check", "--cases", "5", "--steps", "5", "--progress"});
  EXPECT_EQ(with.code, 0) << with.err;
  EXPECT_THAT(with.err, HasSubstr("check: 5/5 cases done"));
  EXPECT_THAT(with.out, Not(HasSubstr("cases done")));
  const testing::Run json =
      testing::run_permitcheck({"check", "--cases", "5", "--steps", "5", "--format", "json"});
  EXPECT_EQ(json.code, 0) << json.err;
  EXPECT_THAT(json.err, Not(HasSubstr("cases done")));  // the test's stderr is no terminal
  EXPECT_THAT(json.out, Not(HasSubstr("cases done")));
}

TEST(ProveProgress, WritesChecksDoneWithProgress) {
  const testing::Run r = testing::run_permitcheck(
      {"prove", "--check", "finalization", "--bound", "8", "--kmax", "2", "--progress"});
  EXPECT_THAT(r.err, HasSubstr("prove: 0/1 checks done, 0:00 elapsed (finalization running)"));
  EXPECT_THAT(r.err, HasSubstr("prove: 1/1 checks done"));
  EXPECT_THAT(r.out, Not(HasSubstr("checks done")));
}

#ifdef PERMITCHECK_REFERENCE_CLIENT
TEST(ConformProgress, WritesALineAsEachScenarioFinishesWithProgress) {
  const testing::Run r = testing::run_permitcheck(
      {"conform", "--client",
       std::string(PERMITCHECK_REFERENCE_CLIENT) +
           " --url {url} --q {q} --delay-ms {delay_ms} --nack-every {nack_every}",
       "--scenarios", "complete_batches,partial_batches", "--cases", "0", "--idle", "0.8",
       "--jobs", "1", "--progress"});
  if (r.err.find("not built in this configuration") != std::string::npos) GTEST_SKIP();
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("conform: 1/2 scenarios done"));
  EXPECT_THAT(r.err, HasSubstr("conform: 2/2 scenarios done"));
  EXPECT_THAT(r.out, Not(HasSubstr("scenarios done")));
}
#endif

}  // namespace
}  // namespace permitcheck::cli
