#include "spec/command_budget.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "spec/ack_set.h"
#include "tests/spec/monitor_testing.h"

namespace permitcheck::spec {
namespace {

using ::testing::HasSubstr;

using monitor_testing::legacy;
using monitor_testing::rev_d;

TEST(CommandBudget, CommandStartsOwningAllP) {
  const CommandBudget b(8);
  EXPECT_EQ(b.p(), 8);
  EXPECT_EQ(b.remaining(), 8);
  EXPECT_EQ(b.claimed(), 0);
  EXPECT_EQ(b.returned(), 0);
  EXPECT_FALSE(b.terminal());
  EXPECT_FALSE(b.transferred());
}

TEST(CommandBudget, ClaimRestoreTerminalThenSecondTerminalIsZero) {
  CommandBudget b(3);
  ASSERT_TRUE(b.claim().ok());
  ASSERT_TRUE(b.claim().ok());
  EXPECT_EQ(b.remaining(), 1);
  ASSERT_TRUE(b.restore().ok());  // the second hand-off failed
  EXPECT_EQ(b.remaining(), 2);
  EXPECT_EQ(b.claimed(), 1);
  EXPECT_EQ(b.finish(), 2);  // terminal: every unit still command-owned
  EXPECT_EQ(b.remaining(), 0);
  EXPECT_TRUE(b.terminal());
  EXPECT_EQ(b.finish(), 0);  // a second terminal transition returns nothing
  EXPECT_EQ(b.returned(), 2);
  EXPECT_EQ(b.claim().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(CommandBudget, K2_RestoreWithoutAClaimIsRejected) {
  CommandBudget b(2);
  const absl::Status s = b.restore();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("K2"));
  EXPECT_EQ(b.remaining(), 2);
  ASSERT_TRUE(b.claim().ok());
  ASSERT_TRUE(b.restore().ok());
  EXPECT_EQ(b.restore().code(), absl::StatusCode::kFailedPrecondition);  // already restored
}

TEST(CommandBudget, ClearedIndexesNeverTouchTheBudget) {
  const AckSet word37(std::vector<std::int64_t>{37});  // {0, 2, 5} of B = 8
  CommandBudget b(word37.count_below(8));
  for (std::int64_t i = 0; i < 8; ++i) {
    if (word37.is_deliverable(i)) {
      ASSERT_TRUE(b.claim().ok()) << i;
    }
  }
  EXPECT_EQ(b.claimed(), 3);
  EXPECT_EQ(b.remaining(), 0);
  EXPECT_EQ(b.finish(), 0);
}

TEST(CommandBudget, DuplicateSkipLeavesItsUnitCommandOwned) {
  CommandBudget b(3);
  ASSERT_TRUE(b.claim().ok());  // index 0 handed off
  // index 1: duplicate, skipped; claims nothing
  ASSERT_TRUE(b.claim().ok());  // index 2 handed off
  EXPECT_EQ(b.finish(), 1);     // the skipped unit comes back with the command
  const CommandProgress progress{.p = 3, .batch_size = 3, .claimed = 2, .skipped = 1};
  EXPECT_EQ(settle_amount(rev_d(), progress), 1);
  EXPECT_EQ(settle_amount(legacy(), progress), 1);  // legacy returns skipped batch messages too
}

TEST(CommandBudget, DeadLetterSkipLeavesItsUnitCommandOwned) {
  // Same accounting as a duplicate: dead-letter handling keeps the message, not the unit.
  CommandBudget b(4);
  ASSERT_TRUE(b.claim().ok());
  EXPECT_EQ(b.finish(), 3);  // three indexes went to dead-letter handling
  const CommandProgress progress{.p = 4, .batch_size = 4, .claimed = 1, .skipped = 3};
  EXPECT_EQ(settle_amount(rev_d(), progress), 3);
  EXPECT_EQ(settle_amount(legacy(), progress), 3);
}

TEST(CommandBudget, K4_L9_NonBatchedBeforeStartMessageIdSettle) {
  const CommandProgress progress{.p = 1, .batch_size = 1, .claimed = 0, .skipped = 1};
  EXPECT_EQ(settle_amount(legacy(), progress), 0);  // L9: 1 lost per message
  EXPECT_EQ(settle_amount(rev_d(), progress), 1);   // K4: the unit stays command-owned
  CommandBudget b(1);
  EXPECT_EQ(b.finish(), 1);
}

TEST(CommandBudget, DirectReturnIsTakenFromTheBudget) {
  // Duplicate non-batched message, P = 1: the direct return is the only return.
  CommandBudget dup(1);
  ASSERT_TRUE(dup.take_direct(1).ok());
  EXPECT_EQ(dup.remaining(), 0);
  EXPECT_EQ(dup.finish(), 0);
  EXPECT_EQ(dup.returned(), 1);
  EXPECT_EQ(settle_amount(rev_d(), {.p = 1, .direct_returned = 1}), 0);

  // Crypto DISCARD of a complete batch P = B = 8: returned once, not 16 (F1).
  CommandBudget discard(8);
  ASSERT_TRUE(discard.take_direct(8).ok());
  EXPECT_EQ(discard.finish(), 0);
  EXPECT_EQ(discard.returned(), 8);
}

TEST(CommandBudget, K6_DirectReturnLargerThanWhatIsLeftIsRejected) {
  CommandBudget b(3);
  ASSERT_TRUE(b.claim().ok());
  ASSERT_TRUE(b.claim().ok());
  const absl::Status s = b.take_direct(2);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("K6"));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("direct return of 2 but the command holds only 1 permit (P = 3)"));
  EXPECT_EQ(b.remaining(), 1);  // nothing taken
  EXPECT_EQ(b.returned(), 0);
  ASSERT_TRUE(b.take_direct(1).ok());
  EXPECT_EQ(b.finish(), 0);
}

TEST(CommandBudget, BesideBudgetReturnsTheUnitTwice) {
  Ruleset rev_b_like = rev_d();
  rev_b_like.direct_returns = DirectReturns::kBesideBudget;
  const CommandProgress duplicate{.p = 1, .direct_returned = 1};
  EXPECT_EQ(settle_amount(rev_b_like, duplicate), 1);  // 1 direct + 1 settle = 2 for P = 1
  EXPECT_EQ(settle_amount(rev_d(), duplicate), 0);
  const CommandProgress discard{.p = 8, .batch_size = 8, .direct_returned = 8};
  EXPECT_EQ(settle_amount(rev_b_like, discard), 8);    // 16 for P = 8
  EXPECT_EQ(settle_amount(rev_d(), discard), 0);
}

TEST(CommandBudget, K8_OneHandOffMoreThanPIsRejected) {
  CommandBudget b(2);
  ASSERT_TRUE(b.claim().ok());
  ASSERT_TRUE(b.claim().ok());
  const absl::Status s = b.claim();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("K8"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("hand-off 3"));
  EXPECT_EQ(b.claimed(), 2);
  EXPECT_EQ(b.finish(), 0);
}

TEST(CommandBudget, TransferLeavesNothingForTheGenericBudget) {
  CommandBudget b(5);
  ASSERT_TRUE(b.claim().ok());
  b.transfer();
  EXPECT_TRUE(b.transferred());
  EXPECT_EQ(b.claim().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(b.take_direct(1).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(b.finish(), 0);
  EXPECT_EQ(b.remaining(), 0);
  EXPECT_EQ(b.returned(), 0);
  for (const Ruleset* rules : all_rulesets()) {
    EXPECT_EQ(settle_amount(*rules, {.p = 5, .batch_size = 5, .claimed = 1,
                                     .failure = FailureStage::kBatch, .transferred = true}),
              0)
        << rules->name;
  }
}

TEST(CommandBudget, FailureStageNamesAndEarliness) {
  const std::vector<std::pair<FailureStage, std::string_view>> names = {
      {FailureStage::kChecksum, "checksum"},
      {FailureStage::kMetadata, "metadata"},
      {FailureStage::kDecompress, "decompress"},
      {FailureStage::kBatch, "batch"},
      {FailureStage::kInconsistent, "inconsistent"}};
  for (const auto& [stage, name] : names) {
    EXPECT_EQ(failure_stage_name(stage), name);
    EXPECT_EQ(parse_failure_stage(name), stage);
  }
  EXPECT_EQ(parse_failure_stage("crc"), std::nullopt);
  EXPECT_TRUE(is_early_failure(FailureStage::kChecksum));
  EXPECT_TRUE(is_early_failure(FailureStage::kMetadata));
  EXPECT_TRUE(is_early_failure(FailureStage::kDecompress));
  EXPECT_FALSE(is_early_failure(FailureStage::kBatch));
  EXPECT_FALSE(is_early_failure(FailureStage::kInconsistent));
}

TEST(CommandBudget, ChecksumFailureSettlesP) {
  const CommandProgress p{.p = 100, .failure = FailureStage::kChecksum};
  EXPECT_EQ(settle_amount(rev_d(), p), 100);
  EXPECT_EQ(settle_amount(legacy(), p), 1);  // 99 lost
  CommandBudget b(100);
  EXPECT_EQ(b.finish(), 100);
}

TEST(CommandBudget, MetadataAndDecompressionFailuresSettleP) {
  for (FailureStage stage : {FailureStage::kMetadata, FailureStage::kDecompress}) {
    const CommandProgress p{.p = 10, .batch_size = 10, .failure = stage};
    EXPECT_EQ(settle_amount(rev_d(), p), 10) << failure_stage_name(stage);
    EXPECT_EQ(settle_amount(legacy(), p), 1) << failure_stage_name(stage);  // 9 lost
  }
}

TEST(CommandBudget, BatchFailureAfterFourHandOffsAndOneSkip) {
  const CommandProgress p{.p = 10, .batch_size = 10, .claimed = 4, .skipped = 1,
                          .failure = FailureStage::kBatch};
  EXPECT_EQ(settle_amount(legacy(), p), 2);  // K + 1
  EXPECT_EQ(4 + settle_amount(legacy(), p), 6);  // with the 4 messages: 4 lost
  EXPECT_EQ(settle_amount(rev_d(), p), 6);
  CommandBudget b(10);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(b.claim().ok());
  EXPECT_EQ(b.finish(), 6);
  EXPECT_EQ(4 + 6, 10);
}

TEST(CommandBudget, K7_PartialBatchFailureBeyondTheDeliverableIndexes) {
  // P = 3 of B = 8, all 3 delivered, parse fails on index 6 (not deliverable).
  const CommandProgress p{.p = 3, .batch_size = 8, .claimed = 3, .failure = FailureStage::kBatch};
  EXPECT_EQ(settle_amount(legacy(), p), 1);
  EXPECT_EQ(3 + settle_amount(legacy(), p), 4);  // 1 over-granted
  EXPECT_EQ(settle_amount(rev_d(), p), 0);       // K7: exactly 3 in total
}

TEST(CommandBudget, InconsistentCommandSettlesTheRestOfP) {
  const CommandProgress p{.p = 3, .batch_size = 8, .claimed = 2,
                          .failure = FailureStage::kInconsistent};
  EXPECT_EQ(settle_amount(rev_d(), p), 1);
  EXPECT_EQ(settle_amount(legacy(), p), 1);
  CommandBudget b(3);
  ASSERT_TRUE(b.claim().ok());
  ASSERT_TRUE(b.claim().ok());
  EXPECT_EQ(b.finish(), 1);
}

// ---- Properties ----

enum class Op { kClaim, kRestore, kSkip, kDirect, kTransfer };

RC_GTEST_PROP(CommandBudget, K5_K6_K7_SettleAmountAgreesWithFinishUnderRevD, ()) {
  const std::int64_t p = *rc::gen::inRange<std::int64_t>(0, 20);
  const auto ops = *rc::gen::container<std::vector<Op>>(rc::gen::weightedElement<Op>(
      {{6, Op::kClaim}, {2, Op::kRestore}, {2, Op::kSkip}, {2, Op::kDirect}, {1, Op::kTransfer}}));
  CommandBudget b(p);
  CommandProgress progress{.p = p, .batch_size = std::max<std::int64_t>(p, 1)};
  for (Op op : ops) {
    switch (op) {
      case Op::kClaim:
        if (b.claim().ok()) ++progress.claimed;
        break;
      case Op::kRestore:
        if (b.restore().ok()) --progress.claimed;
        break;
      case Op::kSkip:
        ++progress.skipped;  // K4: the budget is not touched
        break;
      case Op::kDirect: {
        const std::int64_t n = *rc::gen::inRange<std::int64_t>(0, 4);
        const std::int64_t owned = b.remaining();
        const bool ok = b.take_direct(n).ok();
        RC_ASSERT(ok == (!b.transferred() && n <= owned));  // K6: never more than is owned
        if (ok) progress.direct_returned += n;
        break;
      }
      case Op::kTransfer:
        b.transfer();
        progress.transferred = true;
        break;
    }
    RC_ASSERT(b.claimed() + b.remaining() + b.returned() == p);  // every unit has one owner
  }
  if (*rc::gen::arbitrary<bool>()) progress.failure = *rc::gen::element(
      FailureStage::kBatch, FailureStage::kInconsistent);
  const std::int64_t expected = settle_amount(rev_d(), progress);
  RC_ASSERT(b.finish() == expected);
  RC_ASSERT(b.finish() == 0);                 // K5: later terminal transitions return 0
  RC_ASSERT(b.returned() + b.claimed() <= p); // K7: never more than P
  RC_ASSERT(b.claimed() <= p);                // K8
}

RC_GTEST_PROP(CommandBudget, NeverMoreThanPHandOffs, ()) {
  const std::int64_t p = *rc::gen::inRange<std::int64_t>(0, 50);
  const std::int64_t attempts = *rc::gen::inRange<std::int64_t>(0, 100);
  CommandBudget b(p);
  std::int64_t accepted = 0;
  for (std::int64_t i = 0; i < attempts; ++i) accepted += b.claim().ok() ? 1 : 0;
  RC_ASSERT(accepted == std::min(p, attempts));
}

}  // namespace
}  // namespace permitcheck::spec
