#include "spec/ack_set.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace permitcheck::spec {
namespace {

TEST(AckSet, IndexesZeroTwoFiveAreWordThirtySeven) {
  const AckSet s = AckSet::from_indexes({0, 2, 5});
  EXPECT_EQ(s.words(), std::vector<std::int64_t>{37});
  EXPECT_EQ(s, AckSet({37}));
  EXPECT_EQ(s.count_below(8), 3);  // partial batch {0,2,5} of B = 8: P = 3
  EXPECT_EQ(s.count_all(), 3);
}

TEST(AckSet, LayoutIsJavaBitSetToLongArray) {
  const AckSet s = AckSet::from_indexes({63, 64, 130});
  ASSERT_EQ(s.words().size(), 3U);
  EXPECT_EQ(s.words()[0], INT64_MIN);  // bit 63 of word 0 is the sign bit
  EXPECT_EQ(s.words()[1], 1);          // index 64 -> word 1, bit 0
  EXPECT_EQ(s.words()[2], 4);          // index 130 -> word 2, bit 2
  EXPECT_TRUE(s.is_deliverable(63));
  EXPECT_TRUE(s.is_deliverable(64));
  EXPECT_TRUE(s.is_deliverable(130));
  EXPECT_FALSE(s.is_deliverable(65));
  EXPECT_EQ(s.count_below(64), 1);
  EXPECT_EQ(s.count_below(65), 2);
  EXPECT_EQ(s.count_below(131), 3);
}

TEST(AckSet, BitsAtOrBeyondBAreIgnored) {
  const AckSet s = AckSet::from_indexes({1, 8, 9, 70});
  EXPECT_EQ(s.count_below(8), 1);   // index 8 is at B: ignored
  EXPECT_EQ(s.count_below(9), 2);
  EXPECT_EQ(s.count_below(10), 3);
  EXPECT_EQ(s.count_below(71), 4);
  EXPECT_EQ(s.count_below(1000), 4);
}

TEST(AckSet, NonPositiveBCountsNothing) {
  const AckSet s = AckSet::from_indexes({0, 1});
  EXPECT_EQ(s.count_below(0), 0);
  EXPECT_EQ(s.count_below(-5), 0);
}

TEST(AckSet, CountAllIncludesBitsBeyondB) {
  const AckSet s = AckSet::from_indexes({0, 2, 5, 9, 64});
  EXPECT_EQ(s.count_all(), 5);
  EXPECT_EQ(s.count_below(8), 3);
}

TEST(AckSet, ClearedIndexesAreNotDeliverable) {
  const AckSet s(std::vector<std::int64_t>{37});
  const std::vector<bool> expected = {true, false, true, false, false, true, false, false};
  for (std::int64_t i = 0; i < 8; ++i) EXPECT_EQ(s.is_deliverable(i), expected[i]) << i;
  EXPECT_FALSE(s.is_deliverable(-1));
  EXPECT_FALSE(s.is_deliverable(64));  // beyond the words
}

TEST(AckSet, AbsentIsDistinctFromPresentAllZero) {
  const AckSet absent;
  const AckSet zero(std::vector<std::int64_t>{0});
  EXPECT_TRUE(absent.absent());
  EXPECT_FALSE(zero.absent());
  EXPECT_EQ(zero.count_all(), 0);
  EXPECT_NE(absent, zero);
}

TEST(AckSet, OnlyBeyondBIsDecisionTwo) {
  EXPECT_TRUE(AckSet::from_indexes({9, 10}).only_beyond(8));
  EXPECT_FALSE(AckSet::from_indexes({7, 9}).only_beyond(8));
  EXPECT_FALSE(AckSet(std::vector<std::int64_t>{0}).only_beyond(8));  // all-zero: nothing beyond
  EXPECT_FALSE(AckSet().only_beyond(8));
}

std::vector<std::int64_t> gen_indexes() {
  return *rc::gen::container<std::vector<std::int64_t>>(rc::gen::inRange<std::int64_t>(0, 200));
}

RC_GTEST_PROP(AckSet, CountBelowNeverExceedsCountAll, ()) {
  const std::size_t n = *rc::gen::inRange<std::size_t>(0, 5);
  const AckSet s(*rc::gen::container<std::vector<std::int64_t>>(
      n, rc::gen::arbitrary<std::int64_t>()));
  const std::int64_t b = *rc::gen::inRange<std::int64_t>(-10, 400);
  RC_ASSERT(s.count_below(b) >= 0);
  RC_ASSERT(s.count_below(b) <= s.count_all());
  RC_ASSERT(s.count_below(b) <= std::max<std::int64_t>(b, 0));
  RC_ASSERT(s.count_below(static_cast<std::int64_t>(n) * 64) == s.count_all());
}

RC_GTEST_PROP(AckSet, CountBelowIsNumberOfDeliverableIndexesBelowB, ()) {
  const std::vector<std::int64_t> indexes = gen_indexes();
  const AckSet s = AckSet::from_indexes(indexes);
  const std::int64_t b = *rc::gen::inRange<std::int64_t>(0, 260);
  std::int64_t deliverable = 0;
  for (std::int64_t i = 0; i < b; ++i) deliverable += s.is_deliverable(i) ? 1 : 0;
  RC_ASSERT(s.count_below(b) == deliverable);
  for (std::int64_t i : indexes) RC_ASSERT(s.is_deliverable(i));
}

}  // namespace
}  // namespace permitcheck::spec
