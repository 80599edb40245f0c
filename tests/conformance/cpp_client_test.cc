// What the official C++ client (PyPI pulsar-client 3.13.0, bundling pulsar-client-cpp 4.2.0)
// does under the conformance broker, judged as an old client with its real Flow threshold
// (T = Q/2, lib/ConsumerImpl.cc:121). Each deviation is pinned on its minimal counterexample
// with the numbers observed; conformance/README.md ("C++ client") gives the source lines.
// Skipped when ci/install-python-client.sh has not installed the client, and in sanitizer
// builds.
#include <gtest/gtest.h>

#include <optional>

#include "tests/conformance/official_client.h"

namespace permitcheck::conformance {
namespace {

using spec::RuleId;
using namespace testing;  // NOLINT: the shared helpers of these tests

TEST(CppClient, CompleteBatchesReturnExactlyWhatWasDebited) {
  SKIP_WITHOUT_CPP_CLIENT();
  ScenarioOutcome o = run_scenario(
      preset_client("cpp"),
      params(ScenarioKind::kCompleteBatches, {batch(4), EntrySpec{}, batch(3)}));
  EXPECT_FALSE(o.failed()) << dump(o);
  EXPECT_EQ(o.debited, 8) << dump(o);
}

TEST(CppClient, E2_E5_PartialRedeliveryReturnsTheClearedIndexesToo) {
  SKIP_WITHOUT_CPP_CLIENT();
  // B = 10 with 9 indexes acknowledged earlier: the broker debits P = 1. The client skips the
  // 9 cleared indexes and returns them as permits (ConsumerImpl.cc:820-838), then 1 for the
  // message it hands over: 10 returned for 1 debited, an over-return of B - P = 9.
  EntrySpec e = batch(10);
  e.cleared = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  ScenarioOutcome o = run_scenario(preset_client("cpp"),
                                   params(ScenarioKind::kPartialBatches, {e}));
  EXPECT_EQ(o.debited, 1) << dump(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE2, "over-grant by 9")) << dump(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE5, "broker available 19")) << dump(o);
}

TEST(CppClient, X1_ChecksumFailureReturnsOneForTheWholeBatch) {
  SKIP_WITHOUT_CPP_CLIENT();
  // P = 8 debited; discardCorruptedMessage returns 1 (ConsumerImpl.cc:570, :937): the
  // field-absent fallback, a known deviation for an old client, 7 permits short.
  ScenarioOutcome o = run_scenario(
      preset_client("cpp"),
      params(ScenarioKind::kCorruptChecksum, {faulty_batch(8, EntryFault::kChecksum)}));
  EXPECT_FALSE(o.failed()) << dump(o);
  EXPECT_TRUE(has(o.deviations, RuleId::kX1)) << dump(o);
  EXPECT_EQ(o.debited, 8) << dump(o);
  EXPECT_EQ(o.granted, 10) << dump(o);
}

TEST(CppClient, UnreadableMetadataClosesTheConnectionAndResubscribes) {
  SKIP_WITHOUT_CPP_CLIENT();
  // ClientConnection.cc:752-758: metadata that does not parse closes the whole connection;
  // the consumer resubscribes on a new one, so the debited permits die with the old
  // incarnation and the new one starts with Q.
  ScenarioOutcome o = run_scenario(
      preset_client("cpp"),
      params(ScenarioKind::kUnreadableMetadata, {faulty_batch(3, EntryFault::kMetadata)}));
  EXPECT_FALSE(o.failed()) << dump(o);
  EXPECT_GE(o.incarnations, 2) << dump(o);
  EXPECT_EQ(o.debited, 0) << dump(o);
}

TEST(CppClient, C7_TruncatedBatchCrashesTheProcess) {
  SKIP_WITHOUT_CPP_CLIENT();
  // Commands.cc:921-929 reads the single-message metadata size and slices the payload
  // without checking what is left: a batch cut inside message 0 is read out of bounds. About
  // half the runs end in SIGSEGV (measured: 4 of 8 on an idle machine); the others read
  // garbage. Up to 8 runs are made for one crash.
  EntrySpec e = faulty_batch(3, EntryFault::kTruncatedBatch);
  e.truncate_at = 0;
  std::optional<ScenarioOutcome> crashed;
  for (int run = 0; run < 8 && !crashed; ++run) {
    ScenarioOutcome o = run_scenario(preset_client("cpp"),
                                     params(ScenarioKind::kTruncatedBatch, {e}));
    if (o.client_failure) crashed = std::move(o);
  }
  // The read is out of bounds either way; whether it faults depends on what lies past the
  // buffer, and on a loaded machine 8 runs in a row have survived (seen twice). Then the crash
  // was not reproduced in this run: say so rather than pass or fail on luck.
  if (!crashed) GTEST_SKIP() << "8 runs of the truncated batch without a crash: the out-of-bounds "
                                "read did not fault this time";
  EXPECT_NE(crashed->client_failure->find("status 139"), std::string::npos) << dump(*crashed);
  EXPECT_TRUE(has(crashed->violations, RuleId::kC7, "crashed")) << dump(*crashed);
  EXPECT_EQ(crashed->debited, 3) << dump(*crashed);
}

}  // namespace
}  // namespace permitcheck::conformance
