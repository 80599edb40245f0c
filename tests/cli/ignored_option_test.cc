// An option that a mode would ignore is refused, never dropped silently (issue 35): validate's
// capture-only options (--q, --threshold, --port, --idle, --trace-out and its old spelling
// --emit-trace) on trace files.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_testing.h"

namespace permitcheck::cli {
namespace {

using ::testing::HasSubstr;

std::string trace() { return testing::source_dir() + "/docs/examples/client-pass.jsonl"; }

TEST(IgnoredOption, CaptureOnlyOptionsOnTracesAreUsageErrors) {
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--q", "5"}, {"--threshold", "2"}, {"--port", "6650"},
        {"--idle", "2"}, {"--trace-out", "/tmp/unused.jsonl"},
        {"--emit-trace", "/tmp/unused.jsonl"}}) {
    std::vector<std::string> args = {"validate"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(trace());
    const testing::Run r = testing::run_permitcheck(args);
    EXPECT_EQ(r.code, 2) << extra[0];
    EXPECT_THAT(r.err, HasSubstr(extra[0] + " applies to packet captures only")) << r.err;
  }
}

TEST(IgnoredOption, TheSameTraceWithoutThemIsJudged) {
  const testing::Run r = testing::run_permitcheck({"validate", trace()});
  EXPECT_EQ(r.code, 0) << r.err;
}

}  // namespace
}  // namespace permitcheck::cli
