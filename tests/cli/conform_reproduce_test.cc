// conform runs a failing case again and says how often it failed ("reproduced k of n", issue
// 33): a client that fails every time is reproduced n of n and shrunk one run per smaller case;
// a racy client (here: the reference client that breaks the rules on every other start) is
// reported with the count it had, as racy, and every smaller case gets up to n runs.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_testing.h"

namespace permitcheck::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

#ifdef PERMITCHECK_REFERENCE_CLIENT
std::string reference(const std::string& extra) {
  return std::string(PERMITCHECK_REFERENCE_CLIENT) +
         " --url {url} --q {q} --delay-ms {delay_ms} --nack-every {nack_every}" + extra;
}

testing::Run conform(const std::string& client, const std::string& reproduce) {
  return testing::run_permitcheck({"conform", "--client", client, "--scenarios", "corrupt_checksum",
                                   "--cases", "0", "--idle", "0.8", "--max-shrinks", "6",
                                   "--jobs", "1", "--reproduce", reproduce,
                                   // Q and T given: no flow probe, whose start would count.
                                   "--q", "10", "--threshold", "5"});
}

TEST(ConformReproduce, AFailureEveryRunIsReproducedNOfN) {
  const testing::Run r = conform(reference(" --ruleset legacy"), "3");
  if (r.err.find("not built in this configuration") != std::string::npos) GTEST_SKIP();
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("reproduced: failed the same way in 3 of 3 runs"));
  EXPECT_THAT(r.out, Not(HasSubstr("racy")));
  EXPECT_THAT(r.out, HasSubstr("shrunk in 3 steps"));
}

TEST(ConformReproduce, ARacyFailureSaysHowOftenAndIsStillShrunk) {
  // Starts 1, 3, 5, ... run the legacy rules (C7 on a checksum failure), the others rev-d (pass).
  const std::filesystem::path counter =
      std::filesystem::temp_directory_path() / ("permitcheck-racy-" + std::to_string(::getpid()));
  std::filesystem::remove(counter);
  const std::string racy =
      "n=$(cat " + counter.string() + " 2>/dev/null || echo 0); echo $((n + 1)) > " +
      counter.string() + "; if [ $((n % 2)) -eq 0 ]; then exec " + reference(" --ruleset legacy") +
      "; else exec " + reference("") + "; fi";
  const testing::Run r = conform(racy, "4");
  std::filesystem::remove(counter);
  if (r.err.find("not built in this configuration") != std::string::npos) GTEST_SKIP();
  EXPECT_EQ(r.code, 1) << r.err;
  // The first run failed; of the three re-runs, the second fails: 2 of 4.
  EXPECT_THAT(r.out, HasSubstr("reproduced: failed the same way in 2 of 4 runs of the minimal "
                               "parameters (a racy failure"));
  // A smaller case that passes on its first run is run again and kept when it fails once.
  EXPECT_THAT(r.out, HasSubstr("shrunk in "));
  EXPECT_THAT(r.out, HasSubstr("entries=[b2!checksum]"));
}
#endif

}  // namespace
}  // namespace permitcheck::cli
