// What the Rust Pulsar client (crates.io pulsar 6.9.1, streamnative/pulsar-rs) does under the
// conformance broker, judged as an old client with its real Flow threshold (T = Q/2 + 1 with its
// window, the batch size, set to Q: src/consumer/engine.rs:176, :182). Each deviation is pinned
// with the numbers observed; docs/findings/rust-*.md and conformance/README.md ("Rust client")
// give the source lines. Skipped when ci/install-rust-client.sh has not built the consumer, and
// in sanitizer builds.
#include <gtest/gtest.h>

#include "tests/conformance/official_client.h"

namespace permitcheck::conformance {
namespace {

using spec::RuleId;
using namespace testing;  // NOLINT: the shared helpers of these tests

#define SKIP_WITHOUT_RUST_CLIENT()                                                       \
  if (!installed("clients/rust/permitcheck-rust-consumer")) {                 \
    GTEST_SKIP() << "the Rust client consumer is not built (ci/install-rust-client.sh) "   \
                    "or this is a sanitizer build";                                       \
  }

TEST(RustClient, CompleteBatchesReturnExactlyWhatWasDebited) {
  SKIP_WITHOUT_RUST_CLIENT();
  ScenarioOutcome o = run_scenario(
      preset_client("rust"),
      params(ScenarioKind::kCompleteBatches, {batch(4), EntrySpec{}, batch(3)}));
  EXPECT_FALSE(o.failed()) << dump(o);
  EXPECT_EQ(o.debited, 8) << dump(o);
}

TEST(RustClient, ReconnectStartsAFreshWindow) {
  SKIP_WITHOUT_RUST_CLIENT();
  ScenarioOutcome o = run_scenario(
      preset_client("rust"),
      params(ScenarioKind::kReconnect, {batch(3), EntrySpec{}, batch(2)}, /*disrupt_after=*/1));
  EXPECT_FALSE(o.failed()) << dump(o);
  EXPECT_GE(o.incarnations, 2) << dump(o);
}

TEST(RustClient, E2_E5_PartialRedeliveryIsCountedAsTheWholeBatch) {
  SKIP_WITHOUT_RUST_CLIENT();
  // B = 10 with 9 indexes acknowledged earlier: the broker debits P = 1. The client subtracts
  // num_messages_in_batch (10) from its window at receipt, whatever the ack_set
  // (src/consumer/engine.rs:249-259), so it Flows 10 at once (:176, :182): 10 returned for 1
  // debited, the broker's available 19 = Q + 9.
  EntrySpec e = batch(10);
  e.cleared = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  ScenarioOutcome o = run_scenario(preset_client("rust"),
                                   params(ScenarioKind::kPartialBatches, {e}));
  EXPECT_EQ(o.debited, 1) << dump(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE2, "over-grant by 9")) << dump(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE5)) << dump(o);
}

TEST(RustClient, ChecksumFailureDropsTheConnection) {
  SKIP_WITHOUT_RUST_CLIENT();
  // The frame decoder returns an error on a crc32c mismatch (src/message.rs:337-345), which
  // ends the connection; the consumer engine resubscribes on a new one (engine.rs:129-137):
  // the corrupt entry is never acknowledged with a validation error, and a second incarnation
  // appears.
  ScenarioOutcome o = run_scenario(
      preset_client("rust"),
      params(ScenarioKind::kCorruptChecksum, {faulty_batch(8, EntryFault::kChecksum)}));
  EXPECT_GE(o.incarnations, 2) << dump(o);
  EXPECT_NE(o.client_log_tail.find("Checksum mismatch"), std::string::npos) << dump(o);
}

}  // namespace
}  // namespace permitcheck::conformance
