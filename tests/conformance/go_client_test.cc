// What the official Go client (github.com/apache/pulsar-client-go v0.21.0) does under the
// conformance broker, judged as an old client with its real Flow threshold (T = max(Q/2, 1),
// pulsar/consumer_partition.go:315). Each deviation is pinned on its minimal counterexample
// with the numbers observed; conformance/README.md ("Go client") gives the source lines.
// Skipped when ci/install-go-client.sh has not built the consumer, and in sanitizer builds.
#include <gtest/gtest.h>

#include "tests/conformance/official_client.h"

namespace permitcheck::conformance {
namespace {

using spec::RuleId;
using namespace testing;  // NOLINT: the shared helpers of these tests

#define SKIP_WITHOUT_GO_CLIENT()                                                         \
  if (!installed("clients/go/permitcheck-go-consumer")) {                     \
    GTEST_SKIP() << "the Go client consumer is not built (ci/install-go-client.sh) "       \
                    "or this is a sanitizer build";                                       \
  }

TEST(GoClient, CompleteBatchesReturnExactlyWhatWasDebited) {
  SKIP_WITHOUT_GO_CLIENT();
  ScenarioOutcome o = run_scenario(
      preset_client("go"),
      params(ScenarioKind::kCompleteBatches, {batch(4), EntrySpec{}, batch(3)}));
  EXPECT_FALSE(o.failed()) << dump(o);
  EXPECT_EQ(o.debited, 8) << dump(o);
}

TEST(GoClient, E2_E5_PartialRedeliveryReturnsTheClearedIndexesToo) {
  SKIP_WITHOUT_GO_CLIENT();
  // B = 10 with 9 indexes acknowledged earlier: the broker debits P = 1. The client skips the
  // 9 cleared indexes and adds them to its permits (consumer_partition.go:1395-1397,
  // :1518-1519), a Flow of 9 at once, then 1 more for the message it hands over (held below
  // T): 10 returned for 1 debited, an over-return of B - P = 9.
  EntrySpec e = batch(10);
  e.cleared = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  ScenarioOutcome o = run_scenario(preset_client("go"),
                                   params(ScenarioKind::kPartialBatches, {e}));
  EXPECT_EQ(o.debited, 1) << dump(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE2, "over-grant by 8")) << dump(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE5, "broker available 18")) << dump(o);
}

TEST(GoClient, X1_ChecksumFailureReturnsOneForTheWholeBatch) {
  SKIP_WITHOUT_GO_CLIENT();
  // P = 8 debited; the checksum check (internal/commands.go:107-109) fails and
  // discardCorruptedMessage returns 1 (consumer_partition.go:1260, :2545): the field-absent
  // fallback, a known deviation for an old client, 7 permits short.
  ScenarioOutcome o = run_scenario(
      preset_client("go"),
      params(ScenarioKind::kCorruptChecksum, {faulty_batch(8, EntryFault::kChecksum)}));
  EXPECT_FALSE(o.failed()) << dump(o);
  EXPECT_TRUE(has(o.deviations, RuleId::kX1)) << dump(o);
  EXPECT_EQ(o.debited, 8) << dump(o);
  EXPECT_EQ(o.granted, 10) << dump(o);
}

TEST(GoClient, X1_UnreadableMetadataReturnsOneForTheWholeBatch) {
  SKIP_WITHOUT_GO_CLIENT();
  // ReadMessageMetadata fails; discardCorruptedMessage acknowledges the entry and returns 1
  // (consumer_partition.go:1258-1260, :2545): P = 8 debited, 1 returned, the connection kept.
  ScenarioOutcome o = run_scenario(
      preset_client("go"),
      params(ScenarioKind::kUnreadableMetadata, {faulty_batch(8, EntryFault::kMetadata)}));
  EXPECT_FALSE(o.failed()) << dump(o);
  EXPECT_TRUE(has(o.deviations, RuleId::kX1)) << dump(o);
  EXPECT_EQ(o.incarnations, 1) << dump(o);
  EXPECT_EQ(o.debited, 8) << dump(o);
  EXPECT_EQ(o.granted, 10) << dump(o);
}

TEST(GoClient, C7_TruncatedBatchPanicsTheProcess) {
  SKIP_WITHOUT_GO_CLIENT();
  // readSingleMessage reads the single-message metadata size with no bounds check
  // (internal/commands.go:169, internal/buffer.go:246): a batch cut inside message 0 panics
  // ("index out of range") in the connection's reader goroutine and the process exits 2.
  EntrySpec e = faulty_batch(3, EntryFault::kTruncatedBatch);
  e.truncate_at = 0;
  ScenarioOutcome o = run_scenario(preset_client("go"),
                                   params(ScenarioKind::kTruncatedBatch, {e}));
  ASSERT_TRUE(o.client_failure.has_value()) << dump(o);
  EXPECT_NE(o.client_failure->find("status 2"), std::string::npos) << dump(o);
  EXPECT_NE(o.client_log_tail.find("index out of range"), std::string::npos) << dump(o);
  EXPECT_TRUE(has(o.violations, RuleId::kC7, "crashed")) << dump(o);
  EXPECT_EQ(o.debited, 3) << dump(o);
}

}  // namespace
}  // namespace permitcheck::conformance
