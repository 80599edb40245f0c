// `permitcheck conform`'s Q and T (issue 33): a --q the client's own first Flow contradicts is
// reported as a configuration mismatch naming both numbers, exit 2, where it was an over-grant
// of the difference (exit 1) before; a --q it uses runs as before; the JSON report says where
// Q and T came from ("given", "preset", "inferred").
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "spec/outcome.h"
#include "tests/cli/cli_testing.h"

namespace permitcheck::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

#ifdef PERMITCHECK_REFERENCE_CLIENT

// The reference client; `q` fixed in its command (whatever {q} says) when not empty.
std::string reference_client_q(const std::string& q) {
  return std::string(PERMITCHECK_REFERENCE_CLIENT) + " --url {url} --q " + q +
         " --delay-ms {delay_ms} --nack-every {nack_every}";
}

testing::Run conform(std::vector<std::string> extra) {
  std::vector<std::string> args = {"conform", "--scenarios", "complete_batches", "--cases", "0",
                                   "--idle", "0.8", "--jobs", "1", "--reproduce", "1",
                                   "--max-shrinks", "0"};
  args.insert(args.end(), extra.begin(), extra.end());
  return testing::run_permitcheck(args);
}

nlohmann::json settings_of(const testing::Run& r) {
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j.value("settings", nlohmann::json()) : nlohmann::json();
}

// Before issue 33: "E2 Flow of 1000 ... above Q = 10 (over-grant by 990)", exit 1.
TEST(ConformSettings, AGivenQTheClientContradictsIsAMismatchWithBothNumbersNotAViolation) {
  for (const std::vector<std::string>& given :
       {std::vector<std::string>{"--q", "10", "--threshold", "5"},  // no probe: the first run
        std::vector<std::string>{"--q", "10"}}) {                   // the probe, for T
    std::vector<std::string> args = {"--client", reference_client_q("1000")};
    args.insert(args.end(), given.begin(), given.end());
    const testing::Run r = conform(args);
    EXPECT_EQ(r.code, spec::kExitBadInput) << r.out << r.err;
    EXPECT_NE(r.code, spec::kExitViolation);
    EXPECT_THAT(r.err, HasSubstr("configuration mismatch: the client's first Flow granted 1000 "
                                 "permits, its receiver queue size Q, not the 10 given"));
    EXPECT_THAT(r.out, HasSubstr("verdict: CONFIGURATION-MISMATCH"));
    EXPECT_THAT(r.out, HasSubstr("NOT-JUDGED complete_batches"));
    EXPECT_THAT(r.out, Not(HasSubstr("over-grant by")));
    EXPECT_THAT(r.out, HasSubstr("Rules:\n  no rule violated\n"));
  }
}

TEST(ConformSettings, AGivenQTheClientUsesRunsAsBefore) {
  const testing::Run r = conform({"--client", reference_client_q("{q}"), "--q", "10",
                                  "--threshold", "5", "--format", "json"});
  EXPECT_EQ(r.code, spec::kExitPass) << r.out << r.err;
  const nlohmann::json s = settings_of(r);
  EXPECT_EQ(s.value("q", 0), 10);
  EXPECT_EQ(s.value("threshold", 0), 5);
  EXPECT_EQ(s.value("q_source", ""), "given");
  EXPECT_EQ(s.value("threshold_source", ""), "given");
}

TEST(ConformSettings, TheJsonReportSaysQAndTWereInferred) {
  const testing::Run r =
      conform({"--client", reference_client_q("40"), "--format", "json"});  // told {q} = 10
  EXPECT_EQ(r.code, spec::kExitPass) << r.out << r.err;
  const nlohmann::json s = settings_of(r);
  EXPECT_EQ(s.value("q", 0), 40);
  EXPECT_EQ(s.value("threshold", 0), 20);
  EXPECT_EQ(s.value("q_source", ""), "inferred");
  EXPECT_EQ(s.value("threshold_source", ""), "inferred");
  const testing::Run text = conform({"--client", reference_client_q("40")});
  EXPECT_THAT(text.out, HasSubstr("Q and T: Q = 40 and T = 20, inferred from the client's first "
                                  "Flow and its replenishing Flows"));
}

// A preset's client is told {q} (its run script sets its receiver queue size) and its T is
// documented: both "preset", no probe; whether the preset's client runs here or not, the
// report says where they came from.
TEST(ConformSettings, TheJsonReportSaysQAndTCameFromThePreset) {
  const testing::Run r = conform({"--client-preset", "reference", "--format", "json"});
  const nlohmann::json s = settings_of(r);
  EXPECT_EQ(s.value("q", 0), 10) << r.out << r.err;
  EXPECT_EQ(s.value("threshold", 0), 5);
  EXPECT_EQ(s.value("q_source", ""), "preset");
  EXPECT_EQ(s.value("threshold_source", ""), "preset");
  const testing::Run given = conform({"--client-preset", "reference", "--q", "8", "--format",
                                      "json"});
  EXPECT_EQ(settings_of(given).value("q_source", ""), "given") << given.out << given.err;
  EXPECT_EQ(settings_of(given).value("threshold", 0), 4);
}

#endif  // PERMITCHECK_REFERENCE_CLIENT

}  // namespace
}  // namespace permitcheck::cli
