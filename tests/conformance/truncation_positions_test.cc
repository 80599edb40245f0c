// The truncation_positions scenario (conformance/scenario_cases.cc): a batch cut at every
// position class of a message (1, 2, 3 bytes into its size field, at its boundary, inside its
// metadata, inside its payload). The fault injector puts each cut where it says; the
// reference client settles P at every one; a client whose failure past the size field takes
// another path (the seeded mutant: discard the batch with 1 permit, the decoded messages
// dropped) is caught there under C7, and passes truncated_batch, whose cut is in the size field.
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "conformance/internal/entry_frame.h"
#include "conformance/scenario.h"
#include "protocol/frame.h"
#include "tests/conformance/official_client.h"

namespace permitcheck::conformance {
namespace {

using spec::RuleId;
using testing::dump;
using testing::has;
using testing::reference_client;
using testing::reference_command;

// The batch payload of `d` as the broker sends it.
std::string batch_payload(const Delivery& d) {
  const std::string frame = internal::entry_frame(
      d, {.consumer = 0, .ledger = 7, .batch_size = d.batch_size, .message_permits = 8});
  absl::StatusOr<std::optional<std::string>> one = [&] {
    protocol::FrameSplitter s;
    s.append(frame);
    return s.next();
  }();
  EXPECT_TRUE(one.ok() && one->has_value());
  absl::StatusOr<protocol::Frame> f = protocol::decode_frame(**one);
  EXPECT_TRUE(f.ok());
  absl::StatusOr<protocol::MetadataAndPayload> mp = protocol::parse_metadata_and_payload(f->metadata_and_payload);
  EXPECT_TRUE(mp.ok());
  return mp->payload;
}

TEST(EntryFrame, EachCutEndsTheBatchInsideItsPartOfTheFailingMessage) {
  for (Cut cut : kAllCuts) {
    const Delivery d{.entry = 3, .batch_size = 8, .batched = true,
                     .fault = EntryFault::kTruncatedBatch, .truncate_at = 4, .cut = cut};
    const std::string payload = batch_payload(d);
    const protocol::BatchParse parse = protocol::parse_batch(payload, 8);
    ASSERT_EQ(parse.failed_at, std::optional<int>(4)) << cut_name(cut);
    ASSERT_EQ(parse.messages.size(), 4u) << cut_name(cut);
    std::size_t start = 0;
    for (const protocol::BatchMessage& m : parse.messages) {
      start += 4 + m.metadata.ByteSizeLong() + m.payload.size();
    }
    const std::size_t left = payload.size() - start;  // bytes of message 4 before the cut
    // The whole message 4, for the bounds of its parts.
    Delivery whole = d;
    whole.fault = EntryFault::kNone;
    const protocol::BatchParse full = protocol::parse_batch(batch_payload(whole), 8);
    ASSERT_EQ(full.messages.size(), 8u);
    const std::size_t meta = full.messages[4].metadata.ByteSizeLong();
    const std::size_t body = full.messages[4].payload.size();
    switch (cut) {
      case Cut::kSizeField1: EXPECT_EQ(left, 1u); break;
      case Cut::kSizeField2: EXPECT_EQ(left, 2u); break;
      case Cut::kSizeField3: EXPECT_EQ(left, 3u); break;
      case Cut::kBoundary: EXPECT_EQ(left, 0u); break;
      case Cut::kMetadata:
        EXPECT_GT(left, 4u);
        EXPECT_LT(left, 4 + meta);
        break;
      case Cut::kPayload:
        EXPECT_GT(left, 4 + meta);
        EXPECT_LT(left, 4 + meta + body);
        break;
    }
  }
}

TEST(TruncationPositions, FixedCasesCutEveryPositionClassAfterDecodedMessages) {
  const std::vector<ScenarioParams> cases = fixed_cases(ScenarioKind::kTruncationPositions, 10, 5);
  ASSERT_EQ(cases.size(), std::size(kAllCuts));
  for (std::size_t i = 0; i < cases.size(); ++i) {
    ASSERT_EQ(cases[i].entries.size(), 1u);
    const EntrySpec& e = cases[i].entries[0];
    EXPECT_EQ(e.fault, EntryFault::kTruncatedBatch);
    EXPECT_EQ(e.cut, kAllCuts[i]);
    EXPECT_GT(e.truncate_at, 0) << "good messages decoded before the cut";
    EXPECT_LT(e.truncate_at, e.batch_size);
  }
}

TEST(ReferenceClient, TruncationAtEveryPositionSettlesP) {
  for (const ScenarioParams& p : fixed_cases(ScenarioKind::kTruncationPositions, 10, 5)) {
    ScenarioOutcome o = run_scenario(reference_client(), p);
    EXPECT_FALSE(o.failed()) << dump(o);
    ASSERT_TRUE(o.drain.measured) << dump(o);
    EXPECT_EQ(o.drain.delta, 0) << dump(o);
  }
}

// The seeded mutant discards a batch failing past the size field with 1 permit: caught under
// C7 at the metadata and payload cuts (B = 10 cut at index 5), passing at the
// size-field and boundary cuts, and passing truncated_batch's fixed cases (size field).
TEST(ReferenceClientMutant, C7_TruncatedBatchDiscardIsCaughtOnlyPastTheSizeField) {
  ClientSpec c = reference_client();
  c.command = absl::StrCat(reference_command(), " --mutant truncated-batch-discard");
  for (const ScenarioParams& p : fixed_cases(ScenarioKind::kTruncationPositions, 10, 5)) {
    ScenarioOutcome o = run_scenario(c, p);
    const Cut cut = p.entries[0].cut;
    if (cut == Cut::kMetadata || cut == Cut::kPayload) {
      // 1 of P = 10 returned: the broker stalls at 0 available, 6 to 10 permits short.
      EXPECT_TRUE(has(o.violations, RuleId::kC7, "too few")) << dump(o);
    } else {
      EXPECT_FALSE(o.failed()) << dump(o);
    }
  }
  for (const ScenarioParams& p : fixed_cases(ScenarioKind::kTruncatedBatch, 10, 5)) {
    ScenarioOutcome o = run_scenario(c, p);
    EXPECT_FALSE(o.failed()) << dump(o);
  }
}

}  // namespace
}  // namespace permitcheck::conformance
