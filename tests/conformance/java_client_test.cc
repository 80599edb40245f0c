// Apache's official Java client (org.apache.pulsar:pulsar-client, unmodified from Maven
// Central) through the conformance broker, over real sockets: what it does, pinned by rule ID
// and numbers on small scenarios, so a change on either side is noticed. Source lines are in
// conformance/README.md ("Java client 4.2.4"). pulsar-client does not know message_permits:
// judged as an old client with its real Flow threshold, Q/2 (ConsumerImpl.java:1946 at 4.2.4:
// a Flow is sent once `available >= receiverQueueSize / 2`).
//
// Each test skips, saying why, when java is not on the PATH or the consumer jar of that release
// is not built (ci/install-java-client.sh [VERSION]).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <variant>

#include "absl/strings/str_cat.h"
#include "conformance/scenario.h"
#include "spec/permit_state.h"
#include "tests/conformance/official_client.h"

namespace permitcheck::conformance {
namespace {

using spec::RuleId;
using testing::batch;
using testing::details;
using testing::has;

const std::string kPinned = "4.2.4";  // clients/java/pom.xml

std::string java_dir() { return std::string(PERMITCHECK_SOURCE_DIR) + "/clients/java"; }

std::string jar_of(const std::string& version) {
  return version == kPinned ? java_dir() + "/target/consumer.jar"
                            : absl::StrCat(java_dir(), "/target-", version, "/consumer.jar");
}

// Empty when the client can run; else why not.
std::string java_release_missing(const std::string& version) {
  if (std::system("java -version >/dev/null 2>&1") != 0) return "no java runtime on the PATH";
  if (!std::filesystem::exists(jar_of(version))) {
    return absl::StrCat(jar_of(version), " is not built (ci/install-java-client.sh",
                        version == kPinned ? "" : absl::StrCat(" ", version), ")");
  }
  return "";
}

#define SKIP_WITHOUT_JAVA(version)                                      \
  if (std::string why = java_release_missing(version); !why.empty()) {          \
    GTEST_SKIP() << "Java client " << (version) << ": " << why;         \
  }

ClientSpec java_client(const std::string& version = kPinned, std::int64_t q = 10) {
  const std::string at = version == kPinned ? "" : absl::StrCat("@", version, " ");
  return ClientSpec{.command = absl::StrCat(java_dir(), "/run ", at,
                                            "{url} {topic} {subscription} {q} {delay_ms} "
                                            "{nack_every}"),
                    .q = q, .t = spec::default_threshold(q), .knows_message_permits = false,
                    .timeout = std::chrono::milliseconds(20000),
                    .idle = std::chrono::milliseconds(1500)};
}

EntrySpec partial(std::int64_t b, std::vector<std::int64_t> cleared) {
  EntrySpec e = batch(b);
  e.cleared = std::move(cleared);
  return e;
}

// The scenario with the broker sending message_permits or not (`send_field`).
ScenarioParams params_with_field(ScenarioKind kind, std::vector<EntrySpec> entries,
                                 bool send_field = true) {
  return ScenarioParams{.kind = kind, .send_field = send_field, .entries = std::move(entries)};
}

// ---- 4.2.4 (the newest 4.x release): what passes ----

TEST(JavaClient, CompleteBatchesReturnExactlyWhatWasDebited) {
  SKIP_WITHOUT_JAVA(kPinned);
  ScenarioOutcome o = run_scenario(
      java_client(), params_with_field(ScenarioKind::kCompleteBatches, {batch(4), EntrySpec{}, batch(3)}));
  EXPECT_FALSE(o.failed()) << details(o);
  EXPECT_EQ(o.debited, 8) << details(o);
  EXPECT_EQ(o.incarnations, 1) << details(o);
}

TEST(JavaClient, PartialBatchReturnsOnlyTheDeliverableIndexes) {
  SKIP_WITHOUT_JAVA(kPinned);
  // P = 1 and P = 1: the cleared indexes are not counted (fixed by apache/pulsar#22091).
  ScenarioOutcome o = run_scenario(
      java_client(),
      params_with_field(ScenarioKind::kPartialBatches, {partial(2, {1}), partial(3, {0, 2})}));
  EXPECT_FALSE(o.failed()) << details(o);
  EXPECT_EQ(o.debited, 2) << details(o);
}

TEST(JavaClient, ExtraMessagesBeyondBAreNotRead) {
  SKIP_WITHOUT_JAVA(kPinned);
  EntrySpec e = batch(3);
  e.fault = EntryFault::kExtraMessages;
  e.extra_messages = 2;
  ScenarioOutcome o = run_scenario(java_client(),
                                   params_with_field(ScenarioKind::kInconsistentBatch, {e, batch(2)}));
  EXPECT_FALSE(o.failed()) << details(o);
  EXPECT_EQ(o.debited, 5) << details(o);
}

// ---- 4.2.4: the deviations ----

TEST(JavaClient, X1_ChecksumFailureOfACompleteBatchReturnsOne) {
  SKIP_WITHOUT_JAVA(kPinned);
  // B = 8 debited 8; the client acks it with ChecksumMismatch and counts 1: 7 never return.
  ScenarioOutcome o = run_scenario(
      java_client(),
      params_with_field(ScenarioKind::kCorruptChecksum,
             {EntrySpec{.batch_size = 8, .batched = true, .fault = EntryFault::kChecksum}},
             /*send_field=*/false));
  EXPECT_FALSE(o.failed()) << details(o);
  EXPECT_TRUE(has(o.deviations, RuleId::kX1, "7 permits short")) << details(o);
  EXPECT_EQ(o.debited, 8);
  EXPECT_EQ(o.granted, 10);  // the first Flow only: 1 returned stays below Q/2
}

TEST(JavaClient, X1_UnreadableMetadataReturnsOne) {
  SKIP_WITHOUT_JAVA(kPinned);
  ScenarioOutcome o = run_scenario(
      java_client(),
      params_with_field(ScenarioKind::kUnreadableMetadata,
             {EntrySpec{.batch_size = 8, .batched = true, .fault = EntryFault::kMetadata}},
             /*send_field=*/false));
  EXPECT_FALSE(o.failed()) << details(o);
  EXPECT_TRUE(has(o.deviations, RuleId::kX1, "7 permits short")) << details(o);
  EXPECT_EQ(o.debited, 8);
  EXPECT_EQ(o.granted, 10);
}

TEST(JavaClient, X1_ChecksumFailureStallsAQueueOfTwo) {
  SKIP_WITHOUT_JAVA(kPinned);
  // Q = 2 (Flow at 1): a B = 3 batch debits 3 of the 2 granted (B9), the checksum failure
  // returns 1, one Flow of 1 leaves the broker at 0 for good. PIP-491's message_permits
  // would return 3.
  ScenarioOutcome o = run_scenario(
      java_client(kPinned, 2),
      params_with_field(ScenarioKind::kCorruptChecksum,
             {EntrySpec{.batch_size = 3, .batched = true, .fault = EntryFault::kChecksum}}));
  EXPECT_EQ(o.debited, 3) << details(o);
  EXPECT_EQ(o.granted, 3) << details(o);
  // The suite excuses the shortfall as X1 (2 = B - 1 of an early failure), the stall with it.
  EXPECT_FALSE(o.failed()) << details(o);
  EXPECT_TRUE(has(o.deviations, RuleId::kX1, "stalled")) << details(o);
}

TEST(JavaClient, TruncatedBatchClosesTheConnection) {
  SKIP_WITHOUT_JAVA(kPinned);
  // The batch parser's IndexOutOfBoundsException is not the IllegalStateException the batch
  // loop catches: it reaches ClientCnx.exceptionCaught, which closes the connection, and the
  // client resubscribes on a new one. The permit rules hold (the incarnation and its debt end,
  // B11), but no validation-error ack is sent and the entry comes again: the conformance
  // broker redelivers it to each replacement, as Pulsar does, and Java closes again each time
  // until the broker stops after 3 (1 + 3 closed incarnations, and the last one).
  ScenarioOutcome o = run_scenario(
      java_client(),
      params_with_field(ScenarioKind::kTruncatedBatch,
             {EntrySpec{.batch_size = 3, .batched = true, .fault = EntryFault::kTruncatedBatch,
                        .truncate_at = 1}}));
  EXPECT_FALSE(o.failed()) << details(o);
  EXPECT_EQ(o.incarnations, 5) << details(o);
  EXPECT_EQ(std::count_if(o.events.begin(), o.events.end(), [](const spec::Event& e) {
              const auto* x = std::get_if<spec::Extension>(&e);
              return x != nullptr && x->ev == "x-redelivered-after-client-close-e1";
            }), 3) << details(o);
  EXPECT_TRUE(std::any_of(o.windows.begin(), o.windows.end(), [](const std::string& w) {
    return w.find("the client loops on entry 1") != std::string::npos;
  })) << details(o);
  // No Ack with a validation error: the client closed the connection instead.
  EXPECT_FALSE(std::any_of(o.events.begin(), o.events.end(), [](const spec::Event& e) {
    const auto* ack = std::get_if<spec::Ack>(&e);
    return ack != nullptr && ack->validation_error.has_value();
  })) << details(o);
}

// ---- the bug catalogue: apache/pulsar#22091 in 3.2.0, fixed in 3.2.1 ----

TEST(JavaClient320, E2_E5_PartialBatchRedeliveryCountsTheClearedIndexes) {
  SKIP_WITHOUT_JAVA("3.2.0");
  // B = 2 with index 1 acked (P = 1), B = 3 with 0 and 2 acked (P = 1): 3.2.0 counts each
  // cleared index as a skipped message and returns it: 5 for 2 debited, over-grant 3.
  ScenarioOutcome o = run_scenario(
      java_client("3.2.0"),
      params_with_field(ScenarioKind::kPartialBatches, {partial(2, {1}), partial(3, {0, 2})}));
  EXPECT_TRUE(has(o.violations, RuleId::kE2, "over-grant by 3")) << details(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE5, "broker available 13")) << details(o);
  EXPECT_EQ(o.debited, 2);
  EXPECT_EQ(o.granted, 15);
}

TEST(JavaClient321, PartialBatchRedeliveryReturnsOnlyWhatWasDebited) {
  SKIP_WITHOUT_JAVA("3.2.1");
  ScenarioOutcome o = run_scenario(
      java_client("3.2.1"),
      params_with_field(ScenarioKind::kPartialBatches, {partial(2, {1}), partial(3, {0, 2})}));
  EXPECT_FALSE(o.failed()) << details(o);
  EXPECT_EQ(o.debited, 2);
}

}  // namespace
}  // namespace permitcheck::conformance
